"""``create_box``, ``create_sphere``, ``create_capsule``: an asset of one body with one
shape, centred on the body's origin, built as an MJCF tree for ``AssetData``.

From the docstrings: the box's width, height and depth are its extents along x, y and z;
the capsule extends along x with its origin at its centre. Its ``width`` is taken as the
length of the cylindrical part, the caps adding ``radius`` at each end (an assumption: the
docstring says only "width of the capsule"). The mass comes from ``AssetOptions.density``
("used for calculating mass and inertia tensor when no mass and inertia data are
provided"), the rest distance from ``thickness``; ``fix_base_link`` and
``disable_gravity`` apply as to a loaded asset. The body is named after its shape. It
takes the compiler settings of the other actors of its env (``_env``).
"""

import xml.etree.ElementTree as ElementTree

from ._assets import AssetData
from ._mjcf import ImportFailure, compile_mjcf


def primitive_asset(kind, dimensions, options):
    """The AssetData of a ``kind`` ("box", "sphere", "capsule") of ``dimensions``, or
    ImportFailure for a dimension that is not a positive number."""
    try:
        values = [float(v) for v in dimensions]
    except (TypeError, ValueError):
        raise ImportFailure("create_%s: dimensions must be numbers, got %r"
                            % (kind, dimensions)) from None
    if not all(v > 0 for v in values):  # also refuses NaN
        raise ImportFailure("create_%s: dimensions must be positive, got %s: PhysX has no "
                            "empty shapes" % (kind, values))
    if kind == "box":
        shape = {"type": "box", "size": " ".join(repr(v / 2) for v in values)}
    elif kind == "sphere":
        shape = {"type": "sphere", "size": repr(values[0])}
    else:
        radius, width = values
        shape = {"type": "capsule", "size": repr(radius),
                 "fromto": "%r 0 0 %r 0 0" % (-width / 2, width / 2)}
    shape.update({"name": kind, "density": repr(float(options.density)),
                  "margin": repr(float(options.thickness))})
    root = ElementTree.Element("mujoco", {"model": kind})
    body = ElementTree.SubElement(ElementTree.SubElement(root, "worldbody"), "body",
                                  {"name": kind})
    ElementTree.SubElement(body, "geom", shape)
    # its mass and inertia written out, so that the compiler settings of the env's other
    # actors (the env is one MuJoCo model) cannot change them
    model = compile_mjcf(root, "create_%s" % kind)
    ElementTree.SubElement(body, "inertial", {
        "pos": "0 0 0", "mass": repr(float(model.body_mass[1])),
        "diaginertia": " ".join(repr(float(v)) for v in model.body_inertia[1])})
    return AssetData("create_%s" % kind, options, ElementTree.ElementTree(root))
