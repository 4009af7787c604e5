/*
 * The rcl calls of listener_subscription, compiled against the installed rcl headers so
 * that rcl's option and info structs are laid out by the compiler, never restated in Rust.
 * Errors: rcl's return code; the message stays in rcl's error state for
 * lsub_take_error_string().
 */
#include <stdlib.h>
#include <string.h>

#include <rcl/error_handling.h>
#include <rcl/node.h>
#include <rcl/subscription.h>
#include <rmw/serialized_message.h>

_Static_assert(sizeof(rcl_node_t) == 2 * sizeof(void *), "rcl_node_t is {context, impl}");

/* A subscription on `node` with KeepLast(depth), reliable, volatile: rclcpp's defaults with
 * the given depth. `*out` is heap-allocated; lsub_fini frees it. */
rcl_ret_t lsub_init(
  rcl_subscription_t ** out, const rcl_node_t * node,
  const rosidl_message_type_support_t * type_support, const char * topic, size_t depth)
{
  rcl_subscription_t * subscription = malloc(sizeof(rcl_subscription_t));
  if (subscription == NULL) {
    return RCL_RET_BAD_ALLOC;
  }
  *subscription = rcl_get_zero_initialized_subscription();
  rcl_subscription_options_t options = rcl_subscription_get_default_options();
  options.qos.history = RMW_QOS_POLICY_HISTORY_KEEP_LAST;
  options.qos.depth = depth;
  options.qos.reliability = RMW_QOS_POLICY_RELIABILITY_RELIABLE;
  options.qos.durability = RMW_QOS_POLICY_DURABILITY_VOLATILE;
  rcl_ret_t ret = rcl_subscription_init(subscription, node, type_support, topic, &options);
  if (ret != RCL_RET_OK) {
    free(subscription);
    return ret;
  }
  *out = subscription;
  return RCL_RET_OK;
}

/* Removes the callback (waiting for one in flight, the RMW holds its lock while it runs),
 * then destroys the subscription and frees it. */
rcl_ret_t lsub_fini(rcl_subscription_t * subscription, rcl_node_t * node)
{
  rcl_ret_t unset = rcl_subscription_set_on_new_message_callback(subscription, NULL, NULL);
  rcl_ret_t ret = rcl_subscription_fini(subscription, node);
  free(subscription);
  return ret != RCL_RET_OK ? ret : unset;
}

rcl_ret_t lsub_set_callback(
  const rcl_subscription_t * subscription, rcl_event_callback_t callback, const void * user_data)
{
  return rcl_subscription_set_on_new_message_callback(subscription, callback, user_data);
}

/* After a take that returned `ret`: the taken message's publisher and sequence number (left
 * as they were when nothing was taken). */
static void copy_origin(
  rcl_ret_t ret, const rmw_message_info_t * info, uint8_t * publisher_gid,
  uint64_t * publication_sequence_number)
{
  if (ret == RCL_RET_OK) {
    memcpy(publisher_gid, info->publisher_gid.data, RMW_GID_STORAGE_SIZE);
    *publication_sequence_number = info->publication_sequence_number;
  }
}

/* Takes one message into `message` (the type's C struct). RCL_RET_SUBSCRIPTION_TAKE_FAILED:
 * none was waiting. `publisher_gid` gets RMW_GID_STORAGE_SIZE bytes. */
rcl_ret_t lsub_take(
  const rcl_subscription_t * subscription, void * message, uint8_t * publisher_gid,
  uint64_t * publication_sequence_number)
{
  rmw_message_info_t info = rmw_get_zero_initialized_message_info();
  rcl_ret_t ret = rcl_take(subscription, message, &info, NULL);
  copy_origin(ret, &info, publisher_gid, publication_sequence_number);
  return ret;
}

/* A serialized-message buffer for lsub_take_serialized (the RMW grows it as messages need);
 * NULL if it cannot be allocated. lsub_serialized_free releases it. */
rcl_serialized_message_t * lsub_serialized_new(size_t capacity)
{
  rcl_serialized_message_t * message = malloc(sizeof(rcl_serialized_message_t));
  if (message == NULL) {
    return NULL;
  }
  *message = rmw_get_zero_initialized_serialized_message();
  rcutils_allocator_t allocator = rcutils_get_default_allocator();
  if (rmw_serialized_message_init(message, capacity, &allocator) != RMW_RET_OK) {
    rcl_reset_error();
    free(message);
    return NULL;
  }
  return message;
}

void lsub_serialized_free(rcl_serialized_message_t * message)
{
  if (message != NULL) {
    rcutils_ret_t ret = rmw_serialized_message_fini(message);
    (void)ret;
    rcl_reset_error();
    free(message);
  }
}

/* Takes one message's CDR bytes (encapsulation header first) into `message`, without
 * converting it; `*bytes`/`*length` point into `message` until its next take.
 * RCL_RET_SUBSCRIPTION_TAKE_FAILED: none was waiting. */
rcl_ret_t lsub_take_serialized(
  const rcl_subscription_t * subscription, rcl_serialized_message_t * message,
  const uint8_t ** bytes, size_t * length, uint8_t * publisher_gid,
  uint64_t * publication_sequence_number)
{
  rmw_message_info_t info = rmw_get_zero_initialized_message_info();
  rcl_ret_t ret = rcl_take_serialized_message(subscription, message, &info, NULL);
  copy_origin(ret, &info, publisher_gid, publication_sequence_number);
  *bytes = message->buffer;
  *length = message->buffer_length;
  return ret;
}

size_t lsub_gid_size(void)
{
  return RMW_GID_STORAGE_SIZE;
}

rcl_ret_t lsub_publisher_count(const rcl_subscription_t * subscription, size_t * count)
{
  return rcl_subscription_get_publisher_count(subscription, count);
}

const char * lsub_topic_name(const rcl_subscription_t * subscription)
{
  return rcl_subscription_get_topic_name(subscription);
}

const char * lsub_node_fully_qualified_name(const rcl_node_t * node)
{
  return rcl_node_get_fully_qualified_name(node);
}

/* rcl's error message for the last failure on this thread (valid until the next call), and
 * the error state reset. */
const char * lsub_take_error_string(void)
{
  static _Thread_local rcl_error_string_t message;
  message = rcl_get_error_string();
  rcl_reset_error();
  return message.str;
}
