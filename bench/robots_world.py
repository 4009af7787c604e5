"""A world of N UR3e arms, ur3e_1 … ur3e_N, each with its own controllers, made from the shipped
sdf/ur3e_position_controller.sdf: what the benchmark's robots_N scenarios and the multi-robot
tests simulate."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class NotAvailable(Exception):
    """A scenario's pieces do not exist (yet)."""


ROBOTS_WORLD = 'bench_robots'


def robots_world_states_topic(name: str) -> str:
    return (f'/world/{ROBOTS_WORLD}/model/{name}/model/ur3e_position_controller/model/'
            f'{name}/joint_state')


def robots_world(count: int, models: Path) -> Path:
    """A world with `count` UR3e arms, ur3e_1 … ur3e_<count>, each with its own controllers
    (commands /model/ur3e_<k>/joint/<joint>/0/cmd_pos, states robots_world_states_topic), from
    sdf/ur3e_position_controller.sdf with the arm's model renamed."""
    models.mkdir(parents=True, exist_ok=True)
    controller = (ROOT / 'sdf' / 'ur3e_position_controller.sdf').read_text()
    if controller.count('<name>ur3e</name>') != 1:
        raise NotAvailable('sdf/ur3e_position_controller.sdf no longer names its arm '
                           '<name>ur3e</name>; the multi-robot world cannot be made from it')
    arms = []
    for k in range(1, count + 1):
        name = f'ur3e_{k}'
        (models / f'{name}_position_controller.sdf').write_text(
            controller.replace('<name>ur3e</name>', f'<name>{name}</name>'))
        arms.append(f"""    <model name="{name}">
      <pose>{k % 4} {k // 4} 0 0 0 0</pose>
      <include>
        <uri>model://{name}_position_controller.sdf</uri>
        <name>ur3e_position_controller</name>
      </include>
      <joint name="base_joint" type="fixed">
        <parent>world</parent>
        <child>ur3e_position_controller::{name}::base_link</child>
      </joint>
    </model>""")
    world = models / f'{ROBOTS_WORLD}.sdf'
    world.write_text(f"""<?xml version="1.0" ?>
<!-- {count} UR3e arms for scripts/bench (generated). -->
<sdf version="1.9">
  <world name="{ROBOTS_WORLD}">
    <physics name="2ms" type="ode">
      <max_step_size>0.002</max_step_size>
      <real_time_factor>1.0</real_time_factor>
      <real_time_update_rate>500</real_time_update_rate>
    </physics>
{chr(10).join(arms)}
  </world>
</sdf>
""")
    return world
