//! The rcl handles of the process's rclrs nodes, by fully qualified name.
//!
//! With the binary linked `--wrap=rcl_node_init --wrap=rcl_node_fini`, every call rclrs makes
//! to them arrives here first: a node is recorded once rcl initialized it and forgotten
//! before rcl finalizes it. The real functions are looked up in the loaded librcl.
//!
//! The last node of a context takes its DDS participant with it, and the participant's
//! discovery listener is removed first, with a finite wait (src/participant.cpp says why: the
//! wheels' Fast DDS spins on the unbounded one, for seconds when a discovery callback is in
//! flight, as it is when several processes of one domain stop together).

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::ffi::{
    lsub_node_fully_qualified_name, lsub_quiet_participant, RclNode, RclRet, RCL_RET_OK,
};

/// How long the participant's discovery callbacks in flight are waited for at teardown.
const DISCOVERY_CALLBACKS_WAIT_SEC: std::ffi::c_long = 1;

/// Nodes alive now: (fully qualified name, handle). A name given twice (rcl allows it) maps
/// to the newest node.
static NODES: Mutex<Vec<(String, RclNode)>> = Mutex::new(Vec::new());

/// The handle of the live node named `fully_qualified_name`, if rclrs created it through
/// the wrapper.
pub(crate) fn find(fully_qualified_name: &str) -> Option<RclNode> {
    NODES
        .lock()
        .iter()
        .rev()
        .find(|(name, _)| name == fully_qualified_name)
        .map(|(_, node)| *node)
}

type NodeInit = unsafe extern "C" fn(
    *mut RclNode,
    *const c_char,
    *const c_char,
    *mut c_void,
    *const c_void,
) -> RclRet;
type NodeFini = unsafe extern "C" fn(*mut RclNode) -> RclRet;

fn real<F: Copy>(cell: &OnceLock<usize>, symbol: &CStr) -> F {
    let address = *cell.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT finds librcl's definition
        // (the binary itself defines none: --wrap renamed its references).
        let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr()) };
        assert!(
            !address.is_null(),
            "listener_subscription: {symbol:?} is not loaded (librcl missing?)"
        );
        address as usize
    });
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
    // SAFETY: F is the function pointer type of the symbol's C declaration.
    unsafe { std::mem::transmute_copy(&address) }
}

/// `rcl_node_init` as rclrs calls it, with the node recorded on success.
///
/// # Safety
/// rcl's contract for `rcl_node_init`.
#[no_mangle]
pub unsafe extern "C" fn __wrap_rcl_node_init(
    node: *mut RclNode,
    name: *const c_char,
    namespace: *const c_char,
    context: *mut c_void,
    options: *const c_void,
) -> RclRet {
    static REAL: OnceLock<usize> = OnceLock::new();
    let init: NodeInit = real(&REAL, c"rcl_node_init");
    let ret = init(node, name, namespace, context, options);
    if ret == RCL_RET_OK {
        let fully_qualified = lsub_node_fully_qualified_name(node);
        if !fully_qualified.is_null() {
            let fully_qualified = CStr::from_ptr(fully_qualified)
                .to_string_lossy()
                .into_owned();
            NODES.lock().push((fully_qualified, *node));
        }
    }
    ret
}

/// `rcl_node_fini` as rclrs calls it, the node forgotten first.
///
/// # Safety
/// rcl's contract for `rcl_node_fini`.
#[no_mangle]
pub unsafe extern "C" fn __wrap_rcl_node_fini(node: *mut RclNode) -> RclRet {
    static REAL: OnceLock<usize> = OnceLock::new();
    let fini: NodeFini = real(&REAL, c"rcl_node_fini");
    if !node.is_null() {
        let (implementation, context) = ((*node).implementation, (*node).context);
        let last_of_its_context = {
            let mut nodes = NODES.lock();
            nodes.retain(|(_, known)| known.implementation != implementation);
            !nodes.iter().any(|(_, known)| known.context == context)
        };
        if last_of_its_context {
            // Best effort: when it cannot (another RMW, callbacks still running after the
            // wait), rmw's own removal follows as before.
            lsub_quiet_participant(node, DISCOVERY_CALLBACKS_WAIT_SEC);
        }
    }
    fini(node)
}
