"""The ContactNets cube as the contact tests model it: a free box above a plane (``table`` takes extra attributes
of the plane geom), and the map of the toss CSVs' columns."""

CUBE = """<mujoco model="cube">
  <worldbody>
    <geom name="table" type="plane" size="0 0 1"{table}/>
    <body name="cube" pos="0 0 0.2">
      <freejoint/>
      <geom name="cube_geom" type="box" size="0.0524 0.0524 0.0524" mass="0.37"/>
    </body>
  </worldbody>
</mujoco>
"""
MAP = """time = "t"
[bodies.cube]
pos = ["x", "y", "z"]
quat = ["qw", "qx", "qy", "qz"]
linvel = ["vx", "vy", "vz"]
angvel = ["wx", "wy", "wz"]
angvel_frame = "body"
"""
