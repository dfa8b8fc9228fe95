"""Hand a shape's whole outline to cairo in one call instead of one Python call per curve.

ManimCE's camera (`Camera.set_cairo_context_path`) builds every drawn shape's path with one
`ctx.curve_to(...)` call per cubic Bézier curve, every frame. A frame of our scenes has about 18,000
curves (glyphs are most of them), and that Python loop was the largest single cost of a render
(benchmarks/profile_render.py; docs/lab/rendering-measurements.md "Where the time of a render goes").

`fast_set_cairo_context_path` builds the same path as a `cairo_path_t` array with NumPy and passes it to
cairo's own `cairo_append_path`, which calls `cairo_move_to`, `cairo_curve_to` and `cairo_close_path` for
each element, the calls pycairo makes one at a time. The path, and so every pixel, is the same:
tests/test_cairo_paths.py compares the paths element by element, and tests/test_render.py decodes a clip of
render.py and one of plain `manim render` and compares every frame.

pycairo gives no public way to the `cairo_t` behind a Context, so the pointer is read from pycairo's
object layout and checked: `install()` draws through it once and reads a value back through pycairo. If
anything does not match (another pycairo, another libcairo), it leaves ManimCE's method in place and says
why.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

# cairo_path_data_type_t
MOVE_TO, LINE_TO, CURVE_TO, CLOSE_PATH = 0, 1, 2, 3
NPPCC = 4    # points per cubic curve in a VMobject: anchor, handle, handle, anchor


class _Path(ctypes.Structure):
    """cairo_path_t: status, data (cairo_path_data_t *), num_data."""
    _fields_ = [("status", ctypes.c_int), ("data", ctypes.c_void_p), ("num_data", ctypes.c_int)]


_lib = None
_CONTEXT_POINTER_OFFSET = None   # bytes from a pycairo Context object to its cairo_t *


def _context_pointer(ctx) -> int:
    return ctypes.c_void_p.from_address(id(ctx) + _CONTEXT_POINTER_OFFSET).value


def path_data(vmobject, points: np.ndarray) -> np.ndarray | None:
    """The cairo_path_data_t array (rows of two doubles) of the path ManimCE's set_cairo_context_path
    builds for these points, or None when it builds an empty path. Whether a subpath is closed is decided
    by the VMobject's own consider_points_equals_2d, as ManimCE does."""
    splits = vmobject.get_subpath_split_indices_from_points(points, n_dims=2)
    if len(splits) == 0:
        return None
    n = len(points)
    equal = vmobject.consider_points_equals_2d
    if len(splits) == 1 and n % NPPCC == 0:     # one subpath of whole curves: most shapes
        curves = n // NPPCC
        closed = equal(points[0], points[n - 1])
        data = np.empty((2 + NPPCC * curves + closed, 2), dtype=np.float64)
        header = data.view(np.int32)            # a header row: int type, int length, padding
        header[0, :2] = MOVE_TO, 2
        data[1] = points[0, :2]
        blocks = data[2:2 + NPPCC * curves].reshape(curves, NPPCC, 2)
        blocks[:, 1:] = points[:, :2].reshape(curves, NPPCC, 2)[:, 1:]
        header[2:2 + NPPCC * curves:NPPCC, :2] = CURVE_TO, 4
        if closed:
            header[-1, :2] = CLOSE_PATH, 1
        return data
    starts, ends = splits[:, 0].astype(np.intp), splits[:, 1].astype(np.intp)
    keep = ends - starts >= NPPCC
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return None
    curves = (ends - starts - NPPCC) // NPPCC + 1
    closed = np.array([equal(points[s], points[e - 1]) for s, e in zip(starts, ends)], dtype=np.intp)
    rows = 2 + NPPCC * curves + closed                  # move_to (header, point), curves, close_path (header)
    first = np.concatenate([[0], np.cumsum(rows)[:-1]])
    data = np.empty((int(rows.sum()), 2), dtype=np.float64)
    header = data.view(np.int32)
    header[first, 0], header[first, 1] = MOVE_TO, 2
    data[first + 1] = points[starts, :2]
    # every curve: its subpath, its number within the subpath, its first point
    sub = np.repeat(np.arange(len(starts)), curves)
    nth = np.arange(len(sub)) - np.repeat(np.cumsum(curves) - curves, curves)
    row = first[sub] + 2 + NPPCC * nth
    at = starts[sub] + NPPCC * nth
    header[row, 0], header[row, 1] = CURVE_TO, 4
    data[row + 1] = points[at + 1, :2]
    data[row + 2] = points[at + 2, :2]
    data[row + 3] = points[at + 3, :2]
    last = (first + rows - 1)[closed.astype(bool)]
    header[last, 0], header[last, 1] = CLOSE_PATH, 1
    return data


# The paths already built, by the exact points they were built from. Most shapes of a frame are drawn again,
# unchanged, in the next one (a still label during another shape's animation, a caption): their path is looked up
# by their points' bytes instead of being built again. The key is the points themselves (all three coordinates)
# and the shape's tolerance for equal points (which decides where a subpath closes), so a hit is the path that
# building would give. The cache is emptied when it holds more than CACHE_BYTES (keys and paths).
CACHE_BYTES = 160 * 2 ** 20
_cache: dict[tuple, np.ndarray | None] = {}
_cache_bytes = 0


def cached_path_data(vmobject, points: np.ndarray) -> np.ndarray | None:
    """path_data(vmobject, points), from the cache when these exact points were drawn before."""
    global _cache_bytes
    key = (points.shape, points.tobytes(), vmobject.tolerance_for_point_equality)
    try:
        return _cache[key]
    except KeyError:
        pass
    data = path_data(vmobject, points)
    size = len(key[1]) + (0 if data is None else data.nbytes)
    if _cache_bytes + size > CACHE_BYTES:
        _cache.clear()
        _cache_bytes = 0
    _cache[key] = data
    _cache_bytes += size
    return data


def fast_set_cairo_context_path(self, ctx, vmobject):
    """Camera.set_cairo_context_path, one cairo call per shape (same path, same control flow), the path
    looked up when the same points were drawn before (cached_path_data)."""
    points = self.transform_points_pre_display(vmobject, vmobject.points)
    if len(points) == 0:
        return self          # as ManimCE: the context keeps its current path
    data = cached_path_data(vmobject, np.asarray(points, dtype=np.float64))
    ctx.new_path()
    if data is None:
        return self
    cr = ctypes.c_void_p(_context_pointer(ctx))
    _lib.cairo_append_path(cr, ctypes.byref(_Path(0, data.ctypes.data, len(data))))
    status = _lib.cairo_status(cr)
    if status:
        raise RuntimeError(f"cairo_append_path: {_lib.cairo_status_to_string(status).decode()}")
    return self


def _check() -> str | None:
    """None if the pointer and the library work here, else why not."""
    import cairo
    surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, 4, 4)
    ctx = cairo.Context(surface)
    ctx.set_line_width(3.25)
    cr = _context_pointer(ctx)
    if not cr or _lib.cairo_get_line_width(ctypes.c_void_p(cr)) != 3.25:
        return "the cairo_t pointer read from pycairo's Context does not answer as the Context does"
    ctx.move_to(0.5, 0.5)
    data = np.zeros((5, 2))
    h = data.view(np.int32)
    h[0, :2] = CURVE_TO, 4
    data[1:4] = [[1, 1], [2, 2], [3, 1]]
    h[4, :2] = CLOSE_PATH, 1
    _lib.cairo_append_path(ctypes.c_void_p(cr), ctypes.byref(_Path(0, data.ctypes.data, 5)))
    got = list(ctx.copy_path())
    want = [(cairo.PATH_MOVE_TO, (0.5, 0.5)), (cairo.PATH_CURVE_TO, (1.0, 1.0, 2.0, 2.0, 3.0, 1.0)),
            (cairo.PATH_CLOSE_PATH, ()), (cairo.PATH_MOVE_TO, (0.5, 0.5))]
    if got != want:
        return f"cairo_append_path built {got}, not {want}"
    return None


def install() -> str | None:
    """Put the one-call path into ManimCE's cairo Camera. Returns None when installed, else the reason it
    was not (ManimCE's own method then stays)."""
    global _lib, _CONTEXT_POINTER_OFFSET
    from manim.camera.camera import Camera
    if Camera.set_cairo_context_path is fast_set_cairo_context_path:
        return None
    import cairo
    name = ctypes.util.find_library("cairo")
    if name is None:
        return "libcairo not found"
    try:
        _lib = ctypes.CDLL(name)
    except OSError as e:
        return f"libcairo: {e}"
    _lib.cairo_append_path.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Path)]
    _lib.cairo_append_path.restype = None
    _lib.cairo_status.argtypes = [ctypes.c_void_p]
    _lib.cairo_status.restype = ctypes.c_int
    _lib.cairo_status_to_string.argtypes = [ctypes.c_int]
    _lib.cairo_status_to_string.restype = ctypes.c_char_p
    _lib.cairo_get_line_width.argtypes = [ctypes.c_void_p]
    _lib.cairo_get_line_width.restype = ctypes.c_double
    version = _lib.cairo_version_string
    version.restype = ctypes.c_char_p
    if version().decode() != cairo.cairo_version_string():
        return f"libcairo {version().decode()} is not pycairo's ({cairo.cairo_version_string()})"
    # pycairo's PycairoContext: PyObject_HEAD, then the cairo_t *
    _CONTEXT_POINTER_OFFSET = object.__basicsize__
    why = _check()
    if why:
        return why
    Camera.set_cairo_context_path = fast_set_cairo_context_path
    return None
