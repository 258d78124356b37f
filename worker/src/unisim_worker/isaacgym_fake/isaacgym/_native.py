"""The step's per-env work in C, one foreign call per chunk of envs, without the GIL.

The sim's threads (``_threads``) step chunks of envs in parallel. MuJoCo's Python bindings
give the GIL up and take it back around every call, and the work between the calls (a
clamp, a minimum, a box) is Python that holds it: per env, that serialises most of a step
on a machine of many cores. So one substep of a chunk is one call into the C below
(``unisim_substep``), over a table with a row per env (``ROW``, filled by ``_step``):

- each DOF's velocity clamped to its maximum (``_env.EnvSim.speeds`` says
  why), before the substep and, after the last, again;
- ``mj_step`` in its two halves, with PhysX's drag on each body faster than its maximum
  speeds between them (``drag``; ``_env.EnvSim.body_speeds``);
- the arena pages above what the step left live given back to the system
  (``madvise(MADV_DONTNEED)``) once the step used more than ``KEEP`` bytes
  of it: MuJoCo sizes each env's arena for the worst case (14 MB for a legged_gym robot)
  and the pages a step touches stay resident, so an env whose robot once lay on rough
  ground (hundreds of contacts) would hold most of a megabyte for good; 4096 envs hold
  their usual few contacts' worth instead. The stack at the arena's top holds nothing
  between calls, and a released page reads as zeros when touched again. A new MjData's
  arena and solver statistics (160 KB, zeroed) are given back too (``new_data``);
- the deepest penetration of the step's contacts (``_env.EnvSim.set_floor``);
- after the last substep, the new state's kinematics (bodies, centres of mass,
  velocities; no collision or solve) and the box of the actors' shapes in x, y
  (``_window``).

Over the same table, one call each: the actuator inputs from the sim's DOF targets
(``unisim_controls``), and what ``refresh_*`` copies out (``unisim_dof_states``,
``unisim_roots``, ``unisim_contact_forces``).

The source is compiled once by the system's C compiler (``$CC``, else ``cc``) against the
headers of the MuJoCo that Python imported, into the cache folder (``$UNISIM_CACHE_DIR``,
else ``~/.cache/unisim``), and loaded beside the library the bindings loaded. Where there
is no compiler, each function's Python twin (``substep_python``, ...) does the same, with the
same results, bit for bit, and one GIL hand-over per env and call (no pages are given back
there).
"""

import ctypes
import glob
import hashlib
import math
import os
import subprocess
import sys
import tempfile

import mujoco
import numpy as np

# A row of the table, one per env, as the C struct ``unisim_env`` lays it out.
ROW = np.dtype([("model", "u8"), ("data", "u8"), ("speed", "u8"), ("body_speed", "u8"),
                ("shapes", "u8"), ("radius", "u8"), ("nshape", "i8"), ("kinematics", "i8"),
                ("out", "f8", 5), ("qadr", "u8"), ("vadr", "u8"), ("ndof", "i8"),
                ("dof_start", "i8"), ("body_start", "i8"), ("nbody", "i8"), ("root_q", "u8"),
                ("root_v", "u8"), ("nactor", "i8"), ("actor_start", "i8"), ("actuators", "u8"),
                ("sources", "u8")])
DEEPEST, BOX = 0, slice(1, 5)  # ``out``: the deepest penetration; low x, y, high x, y
KEEP = 128 * 1024  # bytes of arena an env keeps resident (see the module's docstring)

SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <mujoco/mujoco.h>

typedef struct {
    const mjModel *model;
    mjData *data;
    const double *speed;    /* nv: each DOF's maximum speed, +inf where none */
    const double *body_speed;  /* nbody x 2: each body's maximum linear, angular speed */
    const int64_t *shapes;  /* the actors' geoms */
    const double *radius;   /* their bounding spheres' radii */
    int64_t nshape;
    int64_t kinematics;     /* after the last substep: the new state's kinematics and box */
    double out[5];          /* the deepest penetration; the box: low x, y, high x, y */
    const int64_t *qadr;    /* the actors' DOFs: their qpos addresses */
    const int64_t *vadr;    /* and qvel addresses */
    int64_t ndof;
    int64_t dof_start;      /* the env's first row in the sim's DOF state buffer */
    int64_t body_start;     /* and in its body buffers */
    int64_t nbody;          /* the actors' bodies: MuJoCo's bodies 1 to nbody */
    const int64_t *root_q;  /* each actor's free root joint: its qpos address, -1 if fixed */
    const int64_t *root_v;  /* and its qvel address */
    int64_t nactor;
    int64_t actor_start;    /* the env's first row in the sim's root buffer */
    const int64_t *actuators;  /* each DOF's actuator */
    const int64_t *sources;    /* and the column of the sim's targets it takes, 3: none */
} unisim_env;

static void clamp(const mjModel *m, mjData *d, const double *speed) {
    for (int i = 0; i < m->nv; i++) {
        double v = d->qvel[i];
        if (v < -speed[i]) v = -speed[i];
        if (v > speed[i]) v = speed[i];
        d->qvel[i] = v;
    }
}

/* PhysX's force on a body faster than its maximum speeds (PhysX 4.1,
   DyFeatherstoneArticulation.cpp): -m v (1 - max / |v|) / dt and, turning,
   -I w (1 - max / |w|) / dt (I in the world frame), which take the excess away within the
   substep; added into qfrc_applied, which is zero otherwise. Whether it added any. */
static int drag(const mjModel *m, mjData *d, const double *speeds) {
    int dragged = 0;
    double dt = m->opt.timestep;
    for (int b = 1; b < m->nbody; b++) {
        double linear = speeds[2 * b], angular = speeds[2 * b + 1], vel[6];
        double force[3] = {0.0, 0.0, 0.0}, torque[3] = {0.0, 0.0, 0.0};
        if (isinf(linear) && isinf(angular)) continue;
        mj_objectVelocity(m, d, mjOBJ_BODY, b, vel, 0);
        double turn = vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2];
        double move = vel[3] * vel[3] + vel[4] * vel[4] + vel[5] * vel[5];
        if (!(turn > angular * angular) && !(move > linear * linear)) continue;
        if (turn > angular * angular) {
            const double *r = d->ximat + 9 * b, *inertia = m->body_inertia + 3 * b;
            double scale = (1.0 - angular / sqrt(turn)) / dt, local[3];
            for (int i = 0; i < 3; i++)
                local[i] = inertia[i] * (r[i] * vel[0] + r[3 + i] * vel[1] + r[6 + i] * vel[2]);
            for (int i = 0; i < 3; i++)
                torque[i] = -(r[3 * i] * local[0] + r[3 * i + 1] * local[1]
                              + r[3 * i + 2] * local[2]) * scale;
        }
        if (move > linear * linear) {
            double scale = (1.0 - linear / sqrt(move)) / dt;
            for (int i = 0; i < 3; i++) force[i] = -m->body_mass[b] * vel[3 + i] * scale;
        }
        mj_applyFT(m, d, force, torque, d->xipos + 3 * b, b, d->qfrc_applied);
        dragged = 1;
    }
    return dragged;
}

/* The whole pages of [start, end) given back: they read as zeros when next touched. */
static void give_back(uintptr_t start, uintptr_t end) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    start = (start + page - 1) & ~(page - 1);
    end &= ~(page - 1);
    if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
}

static void release(mjData *d) {
    if (d->maxuse_arena <= KEEP) return;
    give_back((uintptr_t)d->arena + d->parena, (uintptr_t)d->arena + d->narena);
    d->maxuse_arena = d->parena;
}

/* A new mjData's touched pages that hold nothing yet: its arena and its solver statistics
   (mjNISLAND x mjNSOLVER entries, zeroed; a solve writes its iterations' first few). */
void unisim_release_new(mjData *d) {
    give_back((uintptr_t)d->arena, (uintptr_t)d->arena + d->narena);
    give_back((uintptr_t)d->solver, (uintptr_t)(d->solver + mjNISLAND * mjNSOLVER));
}

static double deepest(const mjData *d) {
    double low = 0.0;
    for (int i = 0; i < d->ncon; i++)
        if (i == 0 || d->contact[i].dist < low) low = d->contact[i].dist;
    return d->ncon ? -low : 0.0;
}

static void box(const mjData *d, const unisim_env *e, double *out) {
    for (int axis = 0; axis < 2; axis++) {
        double low = 0.0, high = 0.0;
        for (int64_t k = 0; k < e->nshape; k++) {
            double centre = d->geom_xpos[3 * e->shapes[k] + axis];
            double a = centre - e->radius[k], b = centre + e->radius[k];
            if (k == 0 || a < low) low = a;
            if (k == 0 || b > high) high = b;
        }
        out[axis] = low;
        out[2 + axis] = high;
    }
}

/* Each env's DOF states (position, velocity) into rows of out (DOFs x 2). */
void unisim_dof_states(const unisim_env *envs, int64_t count, double *out) {
    for (int64_t i = 0; i < count; i++) {
        const unisim_env *e = envs + i;
        for (int64_t k = 0; k < e->ndof; k++) {
            double *row = out + 2 * (e->dof_start + k);
            row[0] = e->data->qpos[e->qadr[k]];
            row[1] = e->data->qvel[e->vadr[k]];
        }
    }
}

/* Each env's actuator inputs from the sim's targets (DOFs x 3: position, velocity, effort). */
void unisim_controls(const unisim_env *envs, int64_t count, const double *targets) {
    for (int64_t i = 0; i < count; i++) {
        const unisim_env *e = envs + i;
        for (int64_t k = 0; k < e->ndof; k++) {
            int64_t source = e->sources[k];
            e->data->ctrl[e->actuators[k]] =
                source < 3 ? targets[3 * (e->dof_start + k) + source] : 0.0;
        }
    }
}

/* Each env's free roots' joint states into rows of out (actors x 13): qpos (7), qvel (6). */
void unisim_roots(const unisim_env *envs, int64_t count, double *out) {
    for (int64_t i = 0; i < count; i++) {
        const unisim_env *e = envs + i;
        for (int64_t a = 0; a < e->nactor; a++) {
            if (e->root_q[a] < 0) continue;
            double *row = out + 13 * (e->actor_start + a);
            for (int k = 0; k < 7; k++) row[k] = e->data->qpos[e->root_q[a] + k];
            for (int k = 0; k < 6; k++) row[7 + k] = e->data->qvel[e->root_v[a] + k];
        }
    }
}

/* Each env's net contact force per body (world frame), from its contacts in the last solve,
   added into rows of out (bodies x 3): mj_contactForce's force, turned by the contact's
   frame, +f on geom[1]'s body and -f on geom[0]'s (the normal points from geom[0]). */
void unisim_contact_forces(const unisim_env *envs, int64_t count, double *out) {
    for (int64_t i = 0; i < count; i++) {
        const unisim_env *e = envs + i;
        const mjModel *m = e->model;
        mjData *d = e->data;
        double *rows = out + 3 * e->body_start;
        for (int c = 0; c < d->ncon; c++) {
            const mjContact *contact = d->contact + c;
            if (contact->efc_address < 0) continue;
            mjtNum local[6], world[3];
            mj_contactForce(m, d, c, local);
            for (int j = 0; j < 3; j++)
                world[j] = contact->frame[j] * local[0] + contact->frame[3 + j] * local[1]
                    + contact->frame[6 + j] * local[2];
            for (int side = 0; side < 2; side++) {
                int geom = contact->geom[side];
                int body = geom < 0 ? 0 : m->geom_bodyid[geom];
                if (body < 1 || body > e->nbody) continue;
                for (int j = 0; j < 3; j++)
                    rows[3 * (body - 1) + j] += side ? world[j] : -world[j];
            }
        }
    }
}

void unisim_substep(unisim_env *envs, int64_t count, int64_t last) {
    for (int64_t i = 0; i < count; i++) {
        unisim_env *e = envs + i;
        const mjModel *m = e->model;
        mjData *d = e->data;
        clamp(m, d, e->speed);
        mj_step1(m, d);
        int dragged = drag(m, d, e->body_speed);
        mj_step2(m, d);
        if (dragged) mju_zero(d->qfrc_applied, m->nv);
        release(d);
        e->out[0] = deepest(d);
        if (!last) continue;
        clamp(m, d, e->speed);
        if (!e->kinematics) continue;
        mj_kinematics(m, d);
        mj_comPos(m, d);
        mj_comVel(m, d);
        if (e->nshape) box(d, e, e->out + 1);
    }
}
""".replace("KEEP", str(KEEP))

KINEMATICS = (mujoco.mj_kinematics, mujoco.mj_comPos, mujoco.mj_comVel)


def substep_python(table, keep, last):
    """``unisim_substep`` in Python: ``keep`` holds what each row points to, (model, data,
    speed, body_speed, shapes, radius, qadr, vadr, root_q, root_v, actuators, sources), as
    ``_step.Plan`` keeps them."""
    for row, (model, data, speed, body_speed, shapes, radius, *_) in zip(table, keep):
        clamp(data.qvel, speed)
        mujoco.mj_step1(model, data)
        dragged = drag(model, data, body_speed)
        mujoco.mj_step2(model, data)
        if dragged:
            data.qfrc_applied[:] = 0.0
        row["out"][DEEPEST] = deepest(data)
        if not last:
            continue
        clamp(data.qvel, speed)
        if not row["kinematics"]:
            continue
        for function in KINEMATICS:
            function(model, data)
        if len(shapes):
            row["out"][BOX] = box(data, shapes, radius)


def drag(model, data, speeds):
    """The C ``drag`` in Python, in its order of operations (the same sums)."""
    dragged = False
    dt = model.opt.timestep
    vel = np.zeros(6)
    for b in range(1, model.nbody):
        linear, angular = float(speeds[b, 0]), float(speeds[b, 1])
        if math.isinf(linear) and math.isinf(angular):
            continue
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, b, vel, 0)
        v = vel.tolist()
        turn = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        move = v[3] * v[3] + v[4] * v[4] + v[5] * v[5]
        if not turn > angular * angular and not move > linear * linear:
            continue
        force, torque = np.zeros(3), np.zeros(3)
        if turn > angular * angular:
            r, inertia = data.ximat[b].tolist(), model.body_inertia[b].tolist()
            scale = (1.0 - angular / math.sqrt(turn)) / dt
            local = [inertia[i] * (r[i] * v[0] + r[3 + i] * v[1] + r[6 + i] * v[2])
                     for i in range(3)]
            torque[:] = [-(r[3 * i] * local[0] + r[3 * i + 1] * local[1]
                           + r[3 * i + 2] * local[2]) * scale for i in range(3)]
        if move > linear * linear:
            scale = (1.0 - linear / math.sqrt(move)) / dt
            mass = float(model.body_mass[b])
            force[:] = [-mass * v[3 + i] * scale for i in range(3)]
        mujoco.mj_applyFT(model, data, force, torque, data.xipos[b], b, data.qfrc_applied)
        dragged = True
    return dragged


def clamp(qvel, speed):
    np.maximum(qvel, -speed, out=qvel)
    np.minimum(qvel, speed, out=qvel)


def deepest(data):
    """The deepest penetration of ``data``'s contacts (0 without contacts)."""
    return -float(data.contact.dist.min()) if data.ncon else 0.0


def box(data, shapes, radius):
    """[low x, low y, high x, high y] of the bounding spheres of geoms ``shapes``."""
    centres = data.geom_xpos[shapes, 0:2]
    return np.concatenate([(centres - radius[:, None]).min(axis=0),
                           (centres + radius[:, None]).max(axis=0)])


def controls_python(table, keep, targets):
    """``unisim_controls`` in Python."""
    for row, (_, data, *_, actuators, sources) in zip(table, keep):
        rows = row["dof_start"] + np.arange(len(sources))
        data.ctrl[actuators] = np.where(sources < 3, targets[rows, np.minimum(sources, 2)], 0.0)


def dof_states_python(table, keep, out):
    """``unisim_dof_states`` in Python."""
    for row, (_, data, _, _, _, _, qadr, vadr, *_) in zip(table, keep):
        start = row["dof_start"]
        out[start:start + len(qadr), 0] = data.qpos[qadr]
        out[start:start + len(qadr), 1] = data.qvel[vadr]


def roots_python(table, keep, out):
    """``unisim_roots`` in Python."""
    for row, (_, data, *_, root_q, root_v, _, _) in zip(table, keep):
        for a, (q, v) in enumerate(zip(root_q.tolist(), root_v.tolist())):
            if q >= 0:
                out[row["actor_start"] + a, 0:7] = data.qpos[q:q + 7]
                out[row["actor_start"] + a, 7:13] = data.qvel[v:v + 6]


def contact_forces_python(table, keep, out):
    """``unisim_contact_forces`` in Python, in its order of operations (the same sums)."""
    local = np.zeros(6)
    for row, (model, data, *_) in zip(table, keep):
        rows = out[row["body_start"]:row["body_start"] + row["nbody"]]
        for c in range(data.ncon):
            contact = data.contact[c]
            if contact.efc_address < 0:
                continue
            mujoco.mj_contactForce(model, data, c, local)
            frame = contact.frame
            world = [frame[j] * local[0] + frame[3 + j] * local[1] + frame[6 + j] * local[2]
                     for j in range(3)]
            for side in (0, 1):
                geom = contact.geom[side]
                body = model.geom_bodyid[geom] if geom >= 0 else 0
                if 1 <= body <= row["nbody"]:
                    for j in range(3):
                        rows[body - 1, j] += world[j] if side else -world[j]


def new_data(model):
    """``mujoco.MjData(model)``, the pages it touched that hold nothing yet given back where
    the C side is built (``unisim_release_new``)."""
    data = mujoco.MjData(model)
    functions = native()
    if functions is not None:
        functions["release_new"](ctypes.c_void_p(data._address))
    return data


_loaded = []  # [the C functions by name] or [None], once tried


def native():
    """The C functions (``unisim_substep``, ``unisim_controls``, ``unisim_dof_states``,
    ``unisim_roots``, ``unisim_contact_forces``) by name, or None where they cannot be built."""
    if not _loaded:
        try:
            _loaded.append(_load())
        except (OSError, subprocess.SubprocessError, IndexError) as error:
            print("[isaacgym fake] the C kernel could not be built (%s): the fake steps in "
                  "Python, with the same results, slower and on one core; install a C "
                  "compiler (or set CC to one)" % _reason(error), file=sys.stderr)
            _loaded.append(None)
    return _loaded[0]


def _reason(error):
    """One line on why the kernel was not built."""
    if isinstance(error, subprocess.CalledProcessError):
        said = error.stderr.decode(errors="replace").strip().splitlines()
        return said[-1][:300] if said else "%s exited with status %d" % (
            error.cmd[0], error.returncode)
    return str(error)


def _load():
    folder = os.path.dirname(mujoco.__file__)
    library = sorted(glob.glob(os.path.join(folder, "libmujoco.so*"))
                     + glob.glob(os.path.join(folder, "libmujoco*.dylib")))[0]
    ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)  # the bindings' own: the same functions
    compiled = ctypes.CDLL(_compiled(library))
    functions = {}
    for name, last in (("substep", ctypes.c_int64), ("controls", ctypes.c_void_p),
                       ("dof_states", ctypes.c_void_p), ("roots", ctypes.c_void_p),
                       ("contact_forces", ctypes.c_void_p)):
        function = getattr(compiled, "unisim_" + name)
        function.argtypes = [ctypes.c_void_p, ctypes.c_int64, last]
        function.restype = None
        functions[name] = function
    functions["release_new"] = compiled.unisim_release_new
    functions["release_new"].argtypes = [ctypes.c_void_p]
    functions["release_new"].restype = None
    return functions


def _compiled(library):
    """The kernel's shared library, compiled once per source and MuJoCo into the cache."""
    cache = os.environ.get("UNISIM_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "unisim")
    os.makedirs(cache, exist_ok=True)
    digest = hashlib.sha256((SOURCE + os.path.realpath(library)).encode()).hexdigest()[:16]
    target = os.path.join(cache, "isaacgym-fake-step-%s.so" % digest)
    if os.path.exists(target):
        return target
    include = os.path.join(os.path.dirname(mujoco.__file__), "include")
    with tempfile.TemporaryDirectory(dir=cache) as staging:
        source = os.path.join(staging, "step.c")
        with open(source, "w") as handle:
            handle.write(SOURCE)
        built = os.path.join(staging, "step.so")
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-ffp-contract=off", "-shared",
                        "-fPIC", "-I", include, "-o", built, source, library, "-lm"],
                       check=True, capture_output=True, timeout=120)
        os.replace(built, target)  # atomic: a concurrent build ends with one complete file
    return target
