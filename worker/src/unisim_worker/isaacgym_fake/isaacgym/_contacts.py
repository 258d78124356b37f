"""Contacts with the ground as PhysX combines them: friction averaged.

PhysX combines two materials' friction by their average unless told otherwise (its
default ``PxCombineMode::eAVERAGE``; legged_gym's ``anymal_c_flat_config.py``: "on ground
planes the friction combination mode is averaging, i.e total friction = (foot_friction +
1.)/2"), where MuJoCo takes the larger of two geoms' frictions. So the ground (plane,
height fields, triangle meshes) collides through explicit MuJoCo pairs, one per ground
shape and actor shape, whose friction is the average of the two; their other contact
parameters are mixed as MuJoCo mixes a geom pair's (condim, margin and gap the larger,
solref and solimp weighted by solmix). Contacts between actors keep MuJoCo's rule.
"""

import numpy as np

GROUND_PREFIX = "__fake_ground"


def add_ground_pairs(spec, model):
    """A pair in ``spec`` for each ground geom of ``model`` (named ``GROUND_PREFIX``...)
    and each actor geom that collides (a non-zero contype or conaffinity: the ground
    collides with every shape)."""
    names = [model.geom(g).name for g in range(model.ngeom)]
    grounds = [n for n in names if n.startswith(GROUND_PREFIX)]
    shapes = [names[g] for g in range(model.ngeom) if model.geom_bodyid[g] > 0
              and (model.geom_contype[g] or model.geom_conaffinity[g])]
    for ground in grounds:
        for shape in shapes:
            pair = spec.add_pair()
            pair.geomname1, pair.geomname2 = ground, shape


def mix(model):
    """Set every pair's contact parameters from its two geoms' current ones (after a shape's
    friction or a contact time constant changed)."""
    if not model.npair:
        return
    one, two = model.pair_geom1, model.pair_geom2
    f1, f2 = model.geom_friction[one], model.geom_friction[two]
    slide = (f1[:, 0] + f2[:, 0]) / 2
    spin, roll = np.maximum(f1[:, 1], f2[:, 1]), np.maximum(f1[:, 2], f2[:, 2])
    model.pair_friction[:] = np.stack([slide, slide, spin, roll, roll], axis=1)
    weight = _weight(model, one, two)
    model.pair_solref[:] = weight * model.geom_solref[one] + (1 - weight) * model.geom_solref[two]
    model.pair_solimp[:] = weight * model.geom_solimp[one] + (1 - weight) * model.geom_solimp[two]
    model.pair_margin[:] = np.maximum(model.geom_margin[one], model.geom_margin[two])
    model.pair_gap[:] = np.maximum(model.geom_gap[one], model.geom_gap[two])
    model.pair_dim[:] = np.maximum(model.geom_condim[one], model.geom_condim[two])


def pair_timeconst_weights(model, timeconst):
    """What ``mix`` gives each pair's time constant when the geoms' are
    ``max(timeconst, floor)``: (weight, 1 - weight, the first geoms' ``timeconst``, the
    second's), so that ``weight * max(first, floor) + (1 - weight) * max(second, floor)``
    is the pairs' (``EnvSim.limit_depenetration``, at up to every substep, computes only
    that)."""
    one, two = model.pair_geom1, model.pair_geom2
    weight = _weight(model, one, two)[:, 0]
    return weight, 1 - weight, timeconst[one], timeconst[two]


def _weight(model, one, two):
    """Each pair's weight of its first geom (MuJoCo's solmix rule), as a column."""
    m1, m2 = model.geom_solmix[one], model.geom_solmix[two]
    total = m1 + m2
    return np.where(total > 0, m1 / np.where(total > 0, total, 1.0), 0.5)[:, None]
