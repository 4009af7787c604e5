fn main() {
    eprintln!("gz-topic: not yet");
    std::process::exit(2);
}
