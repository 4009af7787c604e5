// Fast DDS participant teardown without the wheel's spin (see src/node_handles.rs).
//
// rmw_fastrtps destroys a context's participant with set_listener(nullptr), which waits
// for discovery callbacks in flight with no timeout. The Jazzy wheels' libfastrtps waits on a
// std::condition_variable built for pthread_cond_timedwait (system clock): "no timeout" is
// steady_clock::time_point::max(), whose conversion to the system clock overflows, so the
// wait returns at once and the loop spins holding the participant's mutex. A discovery
// callback that then needs that mutex to finish (another process's endpoints going away as
// it stops too) can wait for seconds. The same call with a finite timeout waits properly.

#include <chrono>
#include <cstring>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <rcl/node.h>
#include <rmw/rmw.h>
#include <rmw_fastrtps_cpp/get_participant.hpp>

// 0: the participant's discovery listener is removed (rmw's own removal then returns at
// once); 1: not rmw_fastrtps_cpp, nothing done; 2: no participant; 3: callbacks still in
// flight after `timeout_sec` (rmw's own removal then waits as before).
extern "C" int lsub_quiet_participant(const rcl_node_t * node, long timeout_sec)
{
  const char * implementation = rmw_get_implementation_identifier();
  if (implementation == nullptr || std::strcmp(implementation, "rmw_fastrtps_cpp") != 0) {
    return 1;
  }
  rmw_node_t * rmw_node = rcl_node_get_rmw_handle(node);
  if (rmw_node == nullptr) {
    return 2;
  }
  auto participant = rmw_fastrtps_cpp::get_domain_participant(rmw_node);
  if (participant == nullptr) {
    return 2;
  }
  auto ret = participant->set_listener(nullptr, std::chrono::seconds(timeout_sec));
  return ret == eprosima::fastrtps::types::ReturnCode_t::RETCODE_OK ? 0 : 3;
}
