//! [`ListenerSubscription`]: creation, the listener-thread callback, teardown.

use std::ffi::{c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rosidl_runtime_rs::{Message, RmwMessage};

use crate::ffi::{
    self, RclNode, RclSerializedMessage, RclSubscription, RCL_RET_OK,
    RCL_RET_SUBSCRIPTION_TAKE_FAILED,
};
use crate::node_handles;

/// Bytes of a publisher's GID (rmw's `RMW_GID_STORAGE_SIZE`, checked against the headers).
const GID_SIZE: usize = 16;

/// Why a subscription could not be created or queried.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The node's rcl handle was never recorded: the process was not linked with
    /// `ros_link::emit_listener_subscription_link_args`, or the node is gone.
    #[error(
        "the rcl handle of node {node} is unknown: the binary must be linked with \
         ros_link::emit_listener_subscription_link_args()"
    )]
    NodeHandleUnknown { node: String },
    /// The topic name holds a NUL byte.
    #[error("topic name {topic:?} holds a NUL byte")]
    TopicName { topic: String },
    /// No memory for the buffer a serialized subscription takes into.
    #[error("cannot allocate the serialized-message buffer for {topic}")]
    BufferAllocation { topic: String },
    /// rcl refused.
    #[error("{operation} on {topic}: rcl error {code}: {message}")]
    Rcl {
        operation: &'static str,
        topic: String,
        code: i32,
        message: String,
    },
}

/// Who sent a message, as the middleware reports it.
#[derive(Clone, Copy, Debug)]
pub struct TakenInfo<'a> {
    pub publisher_gid: &'a [u8],
    /// The publisher's sequence number of this message (`u64::MAX` when the RMW gives none).
    pub publication_sequence_number: u64,
}

type TypedHandler<T> = Box<dyn FnMut(T, TakenInfo<'_>) + Send>;
type SerializedHandler = Box<dyn FnMut(&[u8], TakenInfo<'_>) + Send>;

/// Where taken messages go.
enum Handler<T> {
    /// Converted to `T`.
    Typed(TypedHandler<T>),
    /// As the middleware holds them (CDR), taken into `buffer`, which is reused.
    Serialized {
        handler: SerializedHandler,
        buffer: SerializedBuffer,
    },
}

/// An rcl serialized-message buffer the shim allocated; the RMW grows it as messages need.
struct SerializedBuffer(*mut RclSerializedMessage);

/// Bytes reserved up front: a robot's joint state is a few hundred.
const SERIALIZED_CAPACITY: usize = 1024;

impl Drop for SerializedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by lsub_serialized_new, freed only here.
        unsafe { ffi::lsub_serialized_free(self.0) }
    }
}

/// What the listener-thread callback reaches through its user-data pointer.
struct Shared<T> {
    subscription: *mut RclSubscription,
    topic: String,
    handler: Mutex<Handler<T>>,
    /// Takes that failed or handlers that panicked; each is logged once per power of two,
    /// never silently.
    failures: AtomicU64,
}

// SAFETY: the subscription pointer is only used for rcl_take, which rcl allows from any
// thread; the handler and its buffer are behind a mutex.
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

/// A subscription of `node` (KeepLast(depth), reliable, volatile) whose messages are taken,
/// converted and handed to the handler on the middleware's listener thread as they arrive.
/// Dropping it waits for a handler call in flight, then destroys the subscription.
pub struct ListenerSubscription<T: Message> {
    shared: Box<Shared<T>>,
    rcl_node: RclNode,
    /// Keeps the rcl node alive for as long as its subscription is.
    _node: rclrs::Node,
}

// SAFETY: the rcl handles are used by this value's methods and by its drop only.
unsafe impl<T: Message> Send for ListenerSubscription<T> {}
unsafe impl<T: Message> Sync for ListenerSubscription<T> {}

impl<T: Message> ListenerSubscription<T> {
    /// Subscribes `node` to `topic` (resolved and remapped as rcl does for any subscription).
    ///
    /// # Errors
    /// The node's rcl handle is unknown ([`Error::NodeHandleUnknown`]) or rcl refused.
    pub fn new(
        node: &rclrs::Node,
        topic: &str,
        depth: usize,
        handler: impl FnMut(T, TakenInfo<'_>) + Send + 'static,
    ) -> Result<Self, Error> {
        Self::create(node, topic, depth, Handler::Typed(Box::new(handler)))
    }

    /// As [`new`](Self::new), but the handler gets each message as the middleware holds it:
    /// its CDR bytes, encapsulation header first, never converted to `T` (one copy into a
    /// reused buffer, no allocation per message). For a handler that reads a few fields of a
    /// message whose conversion would allocate (strings, sequences).
    ///
    /// # Errors
    /// As [`new`](Self::new), or no memory for the buffer.
    pub fn new_serialized(
        node: &rclrs::Node,
        topic: &str,
        depth: usize,
        handler: impl FnMut(&[u8], TakenInfo<'_>) + Send + 'static,
    ) -> Result<Self, Error> {
        // SAFETY: no preconditions; NULL when out of memory.
        let buffer = unsafe { ffi::lsub_serialized_new(SERIALIZED_CAPACITY) };
        if buffer.is_null() {
            return Err(Error::BufferAllocation {
                topic: topic.to_owned(),
            });
        }
        let handler = Handler::Serialized {
            handler: Box::new(handler),
            buffer: SerializedBuffer(buffer),
        };
        Self::create(node, topic, depth, handler)
    }

    fn create(
        node: &rclrs::Node,
        topic: &str,
        depth: usize,
        handler: Handler<T>,
    ) -> Result<Self, Error> {
        let node_name = node.fully_qualified_name();
        let rcl_node =
            node_handles::find(&node_name).ok_or(Error::NodeHandleUnknown { node: node_name })?;
        // SAFETY: no preconditions.
        assert_eq!(unsafe { ffi::lsub_gid_size() }, GID_SIZE, "rmw's GID size");
        let c_topic = CString::new(topic).map_err(|_| Error::TopicName {
            topic: topic.to_owned(),
        })?;
        let rcl_error = |operation, code| Error::Rcl {
            operation,
            topic: topic.to_owned(),
            code,
            message: ffi::take_error_string(),
        };
        let mut subscription = std::ptr::null_mut();
        // SAFETY: the node is alive (rclrs holds it; `node` keeps it so), the type support is
        // T's, the topic is NUL-terminated and copied by rcl.
        let ret = unsafe {
            ffi::lsub_init(
                &mut subscription,
                &rcl_node,
                <T::RmwMsg as RmwMessage>::get_type_support(),
                c_topic.as_ptr(),
                depth,
            )
        };
        if ret != RCL_RET_OK {
            return Err(rcl_error("creating the subscription", ret));
        }
        // SAFETY: a live subscription; rcl returns a string it owns.
        let resolved = unsafe { CStr::from_ptr(ffi::lsub_topic_name(subscription)) }
            .to_string_lossy()
            .into_owned();
        let shared = Box::new(Shared {
            subscription,
            topic: resolved,
            handler: Mutex::new(handler),
            failures: AtomicU64::new(0),
        });
        let this = ListenerSubscription {
            shared,
            rcl_node,
            _node: node.clone(),
        };
        // SAFETY: `shared` is boxed (a stable address) and outlives the registration: drop
        // removes the callback before freeing it.
        let ret = unsafe {
            ffi::lsub_set_callback(
                subscription,
                Some(on_new_message::<T>),
                &*this.shared as *const Shared<T> as *const c_void,
            )
        };
        if ret != RCL_RET_OK {
            return Err(rcl_error("registering the listener callback", ret));
        }
        Ok(this)
    }

    /// The topic's fully resolved name.
    pub fn topic_name(&self) -> &str {
        &self.shared.topic
    }

    /// Publishers matched now.
    ///
    /// # Errors
    /// rcl refused.
    pub fn publisher_count(&self) -> Result<usize, Error> {
        let mut count = 0;
        // SAFETY: a live subscription.
        let ret = unsafe { ffi::lsub_publisher_count(self.shared.subscription, &mut count) };
        if ret != RCL_RET_OK {
            return Err(Error::Rcl {
                operation: "counting publishers",
                topic: self.shared.topic.clone(),
                code: ret,
                message: ffi::take_error_string(),
            });
        }
        Ok(count)
    }
}

impl<T: Message> Drop for ListenerSubscription<T> {
    fn drop(&mut self) {
        // SAFETY: the subscription and node are alive (the node through `_node`); lsub_fini
        // removes the callback (waiting for a call in flight) before destroying it, so
        // `shared` is unused once it returns.
        let ret = unsafe { ffi::lsub_fini(self.shared.subscription, &mut self.rcl_node) };
        if ret != RCL_RET_OK {
            tracing::error!(
                "::Destroying the subscription on {}: rcl error {ret}: {}",
                self.shared.topic,
                ffi::take_error_string()
            );
        }
    }
}

/// rcl's "new message" callback, on the listener thread: takes every waiting message.
unsafe extern "C" fn on_new_message<T: Message>(user_data: *const c_void, _count: usize) {
    // SAFETY: registered with a pointer to a live `Shared<T>` (see `new` and `drop`).
    let shared = unsafe { &*(user_data as *const Shared<T>) };
    let mut handler = shared.handler.lock();
    match &mut *handler {
        Handler::Typed(handler) => take_typed(shared, handler),
        Handler::Serialized { handler, buffer } => take_serialized(shared, handler, buffer),
    }
}

fn take_typed<T: Message>(shared: &Shared<T>, handler: &mut TypedHandler<T>) {
    loop {
        let mut message = T::RmwMsg::default();
        let mut gid = [0u8; GID_SIZE];
        let mut sequence = u64::MAX;
        // SAFETY: a live subscription; `message` is T's initialized C struct; gid holds
        // GID_SIZE bytes.
        let ret = unsafe {
            ffi::lsub_take(
                shared.subscription,
                &mut message as *mut T::RmwMsg as *mut c_void,
                gid.as_mut_ptr(),
                &mut sequence,
            )
        };
        if !shared.taken(ret) {
            return;
        }
        let info = TakenInfo {
            publisher_gid: &gid,
            publication_sequence_number: sequence,
        };
        let message = T::from_rmw_message(message);
        if catch_unwind(AssertUnwindSafe(|| handler(message, info))).is_err() {
            shared.failed("its handler panicked");
        }
    }
}

fn take_serialized<T>(
    shared: &Shared<T>,
    handler: &mut SerializedHandler,
    buffer: &mut SerializedBuffer,
) {
    loop {
        let mut bytes = std::ptr::null();
        let mut length = 0;
        let mut gid = [0u8; GID_SIZE];
        let mut sequence = u64::MAX;
        // SAFETY: a live subscription; the buffer is the shim's and used by this thread only
        // (the handler's lock is held); gid holds GID_SIZE bytes.
        let ret = unsafe {
            ffi::lsub_take_serialized(
                shared.subscription,
                buffer.0,
                &mut bytes,
                &mut length,
                gid.as_mut_ptr(),
                &mut sequence,
            )
        };
        if !shared.taken(ret) {
            return;
        }
        let message: &[u8] = if length == 0 {
            &[]
        } else {
            // SAFETY: rcl filled `length` bytes at `bytes`, valid until the buffer's next take.
            unsafe { std::slice::from_raw_parts(bytes, length) }
        };
        let info = TakenInfo {
            publisher_gid: &gid,
            publication_sequence_number: sequence,
        };
        if catch_unwind(AssertUnwindSafe(|| handler(message, info))).is_err() {
            shared.failed("its handler panicked");
        }
    }
}

impl<T> Shared<T> {
    /// Whether a take returned a message; a failure other than "none waiting" is counted.
    fn taken(&self, ret: ffi::RclRet) -> bool {
        match ret {
            RCL_RET_OK => true,
            RCL_RET_SUBSCRIPTION_TAKE_FAILED => false,
            code => {
                self.failed(&format!(
                    "taking a message failed: rcl error {code}: {}",
                    ffi::take_error_string()
                ));
                false
            }
        }
    }

    fn failed(&self, what: &str) {
        let count = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if count.is_power_of_two() {
            tracing::error!("::{}: {what} ({count} failures so far)", self.topic);
        }
    }
}
