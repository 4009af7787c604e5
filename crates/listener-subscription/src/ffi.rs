//! The C shim's functions (src/shim.c) and the rcl types this crate handles by pointer.

use std::ffi::{c_char, c_void};

/// rcl's `rcl_node_t`: `{context, impl}` (the shim asserts the size).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct RclNode {
    pub context: *mut c_void,
    pub implementation: *mut c_void,
}

// SAFETY: two pointers rcl owns; rcl's node functions may be called from any thread.
unsafe impl Send for RclNode {}
unsafe impl Sync for RclNode {}

/// rcl's `rcl_subscription_t`, only ever behind a pointer the shim allocated.
#[repr(C)]
pub(crate) struct RclSubscription {
    _private: [u8; 0],
}

/// rcl's `rcl_serialized_message_t`, only ever behind a pointer the shim allocated.
#[repr(C)]
pub(crate) struct RclSerializedMessage {
    _private: [u8; 0],
}

pub(crate) type RclRet = i32;
pub(crate) const RCL_RET_OK: RclRet = 0;
pub(crate) const RCL_RET_SUBSCRIPTION_TAKE_FAILED: RclRet = 401;

pub(crate) type OnNewMessage = unsafe extern "C" fn(user_data: *const c_void, count: usize);

extern "C" {
    pub fn lsub_init(
        out: *mut *mut RclSubscription,
        node: *const RclNode,
        type_support: *const c_void,
        topic: *const c_char,
        depth: usize,
    ) -> RclRet;
    pub fn lsub_fini(subscription: *mut RclSubscription, node: *mut RclNode) -> RclRet;
    pub fn lsub_set_callback(
        subscription: *const RclSubscription,
        callback: Option<OnNewMessage>,
        user_data: *const c_void,
    ) -> RclRet;
    pub fn lsub_take(
        subscription: *const RclSubscription,
        message: *mut c_void,
        publisher_gid: *mut u8,
        publication_sequence_number: *mut u64,
    ) -> RclRet;
    pub fn lsub_serialized_new(capacity: usize) -> *mut RclSerializedMessage;
    pub fn lsub_serialized_free(message: *mut RclSerializedMessage);
    pub fn lsub_take_serialized(
        subscription: *const RclSubscription,
        message: *mut RclSerializedMessage,
        bytes: *mut *const u8,
        length: *mut usize,
        publisher_gid: *mut u8,
        publication_sequence_number: *mut u64,
    ) -> RclRet;
    pub fn lsub_gid_size() -> usize;
    pub fn lsub_publisher_count(subscription: *const RclSubscription, count: *mut usize) -> RclRet;
    pub fn lsub_topic_name(subscription: *const RclSubscription) -> *const c_char;
    pub fn lsub_node_fully_qualified_name(node: *const RclNode) -> *const c_char;
    pub fn lsub_take_error_string() -> *const c_char;
    /// src/participant.cpp: removes the participant's discovery listener, waiting at most
    /// `timeout_sec` for callbacks in flight.
    pub fn lsub_quiet_participant(node: *const RclNode, timeout_sec: std::ffi::c_long) -> i32;
}

/// rcl's message for the last failure on this thread, and its error state reset.
pub(crate) fn take_error_string() -> String {
    // SAFETY: the shim returns a thread-local NUL-terminated buffer.
    unsafe { std::ffi::CStr::from_ptr(lsub_take_error_string()) }
        .to_string_lossy()
        .into_owned()
}
