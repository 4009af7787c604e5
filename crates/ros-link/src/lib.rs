//! Build-script helper that links a ROS 2 binary against the pip-installed Jazzy wheels so
//! it runs with an empty environment.
//!
//! Call it from the `build.rs` of every crate that links rclrs (binaries, tests, a pyo3
//! module):
//!
//! ```no_run
//! fn main() -> Result<(), ros_link::Error> {
//!     ros_link::emit_link_args()
//! }
//! ```
//!
//! The build must see a sourced ROS 2 environment: `scripts/env` (`AMENT_PREFIX_PATH` naming
//! the venv), or a regular installation such as `/opt/ros/jazzy`, which needs none of the fixes
//! below. Three fixes, each for a defect of the wheels as a native SDK (the ROS prefix is a
//! Python environment: it has `bin/python3`):
//! 1. The wheels ship no `librmw_implementation.so`, which rclrs links: if no prefix on
//!    `AMENT_PREFIX_PATH` provides it, a symlink to `librmw_fastrtps_cpp.so` (the one RMW the
//!    wheels are built with) goes into `OUT_DIR`.
//! 2. `librcl.so` needs the `*__rosidl_generator_py.so` libraries, which need libpython's
//!    symbols: libpython is linked with `--no-as-needed`.
//! 3. The libraries' own RPATHs point into site-packages, where they are not: the venv's `lib`,
//!    the bundled `ros_*.libs` directories and libpython's directory become `DT_RPATH`
//!    (`--disable-new-dtags`, because only `DT_RPATH` also applies to the libraries' own
//!    dependencies). The binary is therefore tied to the venv's location.
//!
//! With `ROS_LINK_RPATH=none` (set by the package's CMakeLists.txt under colcon) fix 3 is left
//! out: an installed ROS binary finds its libraries through the `LD_LIBRARY_PATH` of the
//! sourced setup files, like every ROS binary, and the linker finds them through
//! `-rpath-link`.

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

/// Why the link arguments could not be worked out.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no entry of AMENT_PREFIX_PATH ({0:?}) holds lib/librcl.so: source scripts/env \
         (after scripts/setup-ros), or a ROS 2 installation's setup.bash, before building"
    )]
    NoRosPrefix(String),
    #[error("{python} (the ROS venv's python) could not be run: {source}")]
    Python {
        python: PathBuf,
        source: std::io::Error,
    },
    #[error("{python} did not report its library settings: {detail}")]
    PythonConfig { python: PathBuf, detail: String },
    #[error(
        "{python} has no shared libpython (Py_ENABLE_SHARED=0), which librcl.so needs; \
         use a python built with --enable-shared (Debian's, or pyenv with \
         PYTHON_CONFIGURE_OPTS=--enable-shared)"
    )]
    StaticPython { python: PathBuf },
    #[error("ROS_LINK_RPATH is {0:?}; it must be \"venv\" (the default) or \"none\"")]
    RpathMode(String),
    #[error("cannot create the librmw_implementation.so symlink in {dir}: {source}")]
    Shim {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cargo did not set OUT_DIR (ros_link must be called from a build script)")]
    NoOutDir,
}

/// What the venv's python reports about itself.
#[derive(Debug)]
struct PythonLibs {
    /// Directory holding `libpython<ldversion>.so`.
    lib_dir: PathBuf,
    /// `3.11`, `3.12`, … (with an ABI suffix on some builds).
    ld_version: String,
    /// `site-packages/ros_*.libs`, the third-party libraries the wheels bundle.
    bundled_dirs: Vec<PathBuf>,
}

/// Prints the `cargo:` directives that link the current package against the ROS wheels.
pub fn emit_link_args() -> Result<(), Error> {
    println!("cargo:rerun-if-env-changed=AMENT_PREFIX_PATH");
    let prefixes = ament_prefixes();
    let ros_prefix = prefixes
        .iter()
        .find(|p| p.join("lib/librcl.so").is_file())
        .ok_or_else(|| Error::NoRosPrefix(env::var("AMENT_PREFIX_PATH").unwrap_or_default()))?;
    let ros_lib = ros_prefix.join("lib");
    // Every prefix's lib/, e.g. a colcon workspace's install/sas_msgs/lib: rclrs's build
    // script records them only when ROS_DISTRO changes, so after AMENT_PREFIX_PATH changed
    // its list would be stale.
    for lib in prefixes
        .iter()
        .map(|p| p.join("lib"))
        .filter(|l| l.is_dir())
    {
        println!("cargo:rustc-link-search=native={}", lib.display());
    }

    if !prefixes
        .iter()
        .any(|p| p.join("lib/librmw_implementation.so").exists())
    {
        let shim = rmw_implementation_shim(&ros_lib)?;
        println!("cargo:rustc-link-search=native={}", shim.display());
    }

    let python = ros_prefix.join("bin/python3");
    if !python.exists() {
        // A regular ROS installation: its libraries link and load as they are.
        return Ok(());
    }
    let rpath = rpath_into_venv()?;
    let libs = python_libs(&python)?;
    println!("cargo:rustc-link-search=native={}", libs.lib_dir.display());
    println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
    println!("cargo:rustc-link-arg=-lpython{}", libs.ld_version);
    println!("cargo:rustc-link-arg=-Wl,--as-needed");
    let dirs = std::iter::once(&ros_lib)
        .chain(&libs.bundled_dirs)
        .chain(std::iter::once(&libs.lib_dir));
    if rpath {
        println!("cargo:rustc-link-arg=-Wl,--disable-new-dtags");
        for dir in dirs {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
    } else {
        for dir in dirs {
            println!("cargo:rustc-link-arg=-Wl,-rpath-link,{}", dir.display());
        }
    }
    Ok(())
}

/// The directories that hold the ROS packages' C headers: `<prefix>/include/<package>` for
/// every prefix on `AMENT_PREFIX_PATH` (the layout of the wheels and of ROS installations),
/// and `<prefix>/include` itself (a merged install).
pub fn include_dirs() -> Vec<PathBuf> {
    println!("cargo:rerun-if-env-changed=AMENT_PREFIX_PATH");
    let mut dirs = Vec::new();
    for include in ament_prefixes().iter().map(|p| p.join("include")) {
        let Ok(entries) = std::fs::read_dir(&include) else {
            continue;
        };
        let mut packages: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        packages.sort();
        dirs.push(include);
        dirs.extend(packages);
    }
    dirs
}

/// The link arguments of a binary (or Python module) that uses the crate
/// `listener-subscription`: rclrs's calls to `rcl_node_init`/`rcl_node_fini` go through that
/// crate's wrappers, which remember each node's rcl handle (rclrs keeps it private), and the
/// wrappers are pulled into the link whatever the order of the libraries.
pub fn emit_listener_subscription_link_args() {
    for symbol in ["rcl_node_init", "rcl_node_fini"] {
        println!("cargo:rustc-link-arg=-Wl,--wrap={symbol}");
        println!("cargo:rustc-link-arg=-Wl,--undefined=__wrap_{symbol}");
    }
}

/// Whether the binary gets the venv's library directories as RPATH (`ROS_LINK_RPATH`).
fn rpath_into_venv() -> Result<bool, Error> {
    println!("cargo:rerun-if-env-changed=ROS_LINK_RPATH");
    match env::var("ROS_LINK_RPATH").as_deref() {
        Err(_) | Ok("venv") => Ok(true),
        Ok("none") => Ok(false),
        Ok(other) => Err(Error::RpathMode(other.to_owned())),
    }
}

fn ament_prefixes() -> Vec<PathBuf> {
    env::var_os("AMENT_PREFIX_PATH")
        .map(|v| {
            env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// A directory in OUT_DIR whose `librmw_implementation.so` is the wheels' Fast DDS RMW.
/// Its SONAME is `librmw_fastrtps_cpp.so`, so that is what the binary records.
fn rmw_implementation_shim(ros_lib: &Path) -> Result<PathBuf, Error> {
    let dir = PathBuf::from(env::var_os("OUT_DIR").ok_or(Error::NoOutDir)?).join("rmw_shim");
    let shim_error = |source| Error::Shim {
        dir: dir.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(shim_error)?;
    let link = dir.join("librmw_implementation.so");
    if link.symlink_metadata().is_ok() {
        std::fs::remove_file(&link).map_err(shim_error)?;
    }
    std::os::unix::fs::symlink(ros_lib.join("librmw_fastrtps_cpp.so"), &link)
        .map_err(shim_error)?;
    Ok(dir)
}

fn python_libs(python: &Path) -> Result<PythonLibs, Error> {
    const QUERY: &str = "\
import glob, os, sysconfig as s
print(s.get_config_var('Py_ENABLE_SHARED'))
print(s.get_config_var('LIBDIR'))
print(s.get_config_var('LDVERSION'))
for d in sorted(glob.glob(os.path.join(s.get_paths()['purelib'], 'ros_*.libs'))): print(d)
";
    let output = Command::new(python)
        .args(["-c", QUERY])
        // The wheels' bootstrapper would re-exec python to set LD_LIBRARY_PATH: not needed here.
        .env("_ROS_WHEELS_BOOTSTRAP_COMPLETE", "1")
        .output()
        .map_err(|source| Error::Python {
            python: python.to_owned(),
            source,
        })?;
    let config_error = |detail: String| Error::PythonConfig {
        python: python.to_owned(),
        detail,
    };
    if !output.status.success() {
        return Err(config_error(format!(
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let text = String::from_utf8(output.stdout).map_err(|e| config_error(e.to_string()))?;
    let mut lines = text.lines();
    let mut next = |what: &str| {
        lines
            .next()
            .map(str::to_owned)
            .ok_or_else(|| config_error(format!("no {what} in its answer {text:?}")))
    };
    let shared = next("Py_ENABLE_SHARED")?;
    let lib_dir = PathBuf::from(next("LIBDIR")?);
    let ld_version = next("LDVERSION")?;
    if shared.trim() != "1" {
        return Err(Error::StaticPython {
            python: python.to_owned(),
        });
    }
    Ok(PythonLibs {
        lib_dir,
        ld_version,
        bundled_dirs: lines.map(PathBuf::from).collect(),
    })
}
