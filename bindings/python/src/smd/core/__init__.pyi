from smd.core import modes as modes
