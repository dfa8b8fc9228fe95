"""cairo_paths hands cairo the path ManimCE's camera builds, element for element, so every pixel is the same.

The end-to-end check is tests/test_render.py (a render.py clip and a plain `manim render` compared frame by
frame); these tests look at the paths themselves, on the shapes the scenes draw and on odd ones.
"""

import cairo
import numpy as np
import pytest
from manim import (
    Annulus, Arrow, Brace, Circle, DashedLine, Dot, Line, MathTex, NumberPlane, Rectangle, Square, Star, Text,
    UP, VGroup, VMobject,
)
from manim.camera.camera import Camera


from pipeline import cairo_paths
from scenes import style

MANIM_PATH = Camera.set_cairo_context_path     # ManimCE's own, before install()


def shape(points) -> VMobject:
    m = VMobject()
    m.points = np.array(points, dtype=float)
    return m


def odd_shapes() -> list[VMobject]:
    rng = np.random.default_rng(7)
    return [
        shape([[0, 0, 0], [1, 1, 0], [2, 1, 0], [3, 0, 0]]),                       # one open curve
        shape([[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 0, 0]]),                       # one closed curve
        shape([[0, 0, 0], [1, 1, 0], [2, 1, 0]]),                                  # fewer points than a curve
        shape([[0, 0, 0], [1, 1, 0], [2, 1, 0], [3, 0, 0], [3, 0, 0], [4, 1, 0], [5, 1, 0], [0, 0, 0],
               [9, 9, 0]]),                                                        # a leftover point
        shape([[0, 0, 0], [1, 1, 0], [2, 1, 0], [3, 0, 0], [5, 5, 0], [6, 6, 0], [7, 6, 0], [5, 5, 0]]),
        shape([[0, 0, 0], [1, np.nan, 0], [2, 1, 0], [3, 0, 0]]),                   # not finite: ManimCE's (0,0,0)
        shape([[0, 0, 0], [1, 1, 0], [2, 1, 0], [np.inf, 0, 0], [np.inf, 0, 0], [1, 1, 0], [2, 2, 0], [0, 0, 0]]),
        shape([[0, 0, 5], [1, 1, -3], [2, 1, 2], [3e-9, 1e-9, 0]]),                # z ignored, near-equal ends
        shape(rng.normal(size=(400, 3))),                                          # 100 curves, splits anywhere
        shape(np.repeat(rng.normal(size=(50, 3)), 4, axis=0)),                      # degenerate curves
        shape(np.zeros((0, 3))),
    ]


def scene_shapes() -> list[VMobject]:
    mobs = [Text("Hello token 你好世界", font=style.FONT), MathTex(r"\frac{e^{x_i}}{\sum_j e^{x_j}}"),
            Circle(), Square(), Rectangle(width=4, height=1), Line(), Arrow(), DashedLine(), Annulus(), Star(),
            Brace(Square()), NumberPlane(), Dot(), VGroup(*[Circle(radius=r) for r in (0.5, 1.0)])]
    return [m for mob in mobs for m in mob.family_members_with_points()]


@pytest.fixture(scope="module")
def installed():
    why = cairo_paths.install()
    assert why is None, f"the one-call path is not used on this machine: {why}"
    yield
    Camera.set_cairo_context_path = MANIM_PATH    # other tests in this process draw as before


def paths(mobject: VMobject, camera: Camera) -> tuple[list, list]:
    """(ManimCE's path, cairo_paths's path) of one shape, each drawn on a context that already has a path."""
    out = []
    for method in (MANIM_PATH, cairo_paths.fast_set_cairo_context_path):
        ctx = cairo.Context(cairo.ImageSurface(cairo.FORMAT_ARGB32, 8, 8))
        ctx.move_to(0.25, 0.75)            # a path left from an earlier shape: an empty shape must keep it
        ctx.line_to(0.5, 0.5)
        method(camera, ctx, mobject)
        out.append(list(ctx.copy_path()))
    return out[0], out[1]


@pytest.mark.parametrize("kind", ["odd", "scene"])
def test_every_path_element_is_the_same(installed, kind):
    camera = Camera()
    shapes = odd_shapes() if kind == "odd" else scene_shapes()
    for i, mobject in enumerate(shapes):
        manim_path, ours = paths(mobject, camera)
        assert ours == manim_path, f"{kind} shape {i} ({len(mobject.points)} points): {ours[:5]} != {manim_path[:5]}"
    assert sum(len(m.points) for m in shapes) > 400


def test_the_arrays_hold_what_cairo_path_data_holds(installed):
    """Rows of (header, points): a move_to per subpath, 4 rows per curve, a close_path for closed ones."""
    two = shape([[0, 0, 0], [1, 1, 0], [2, 1, 0], [0, 0, 0], [5, 5, 0], [6, 6, 0], [7, 6, 0], [8, 8, 0]])
    data = cairo_paths.path_data(two, two.points)
    header = data.view(np.int32)
    kinds = [int(header[r, 0]) for r in (0, 2, 6, 7, 9)]
    assert kinds == [cairo_paths.MOVE_TO, cairo_paths.CURVE_TO, cairo_paths.CLOSE_PATH, cairo_paths.MOVE_TO,
                     cairo_paths.CURVE_TO]
    assert len(data) == 2 + 4 + 1 + 2 + 4
    assert data[8].tolist() == [5.0, 5.0] and data[12].tolist() == [8.0, 8.0]


def test_a_frame_is_the_same_pixel_for_pixel(installed):
    group = VGroup(Text("Queries, keys 查询与键", font=style.FONT).scale(1.4).to_edge(UP),
                   NumberPlane().set_opacity(0.6), Star(color="#E07A5F", fill_opacity=0.7).scale(2),
                   Annulus(fill_opacity=0.5).shift(3 * np.array([1, 0, 0])), DashedLine(stroke_width=8))
    frames = []
    for method in (MANIM_PATH, cairo_paths.fast_set_cairo_context_path):
        Camera.set_cairo_context_path = method
        camera = Camera(pixel_width=640, pixel_height=360)
        camera.capture_mobjects([group])
        frames.append(camera.pixel_array.copy())
    Camera.set_cairo_context_path = cairo_paths.fast_set_cairo_context_path
    assert frames[0].any() and np.array_equal(frames[0], frames[1])


def test_install_leaves_manim_drawing_when_the_library_is_not_pycairos(installed, monkeypatch):
    """If the libcairo that ctypes finds is not the one pycairo draws with, ManimCE's loop stays, and why."""
    import cairo as pycairo
    Camera.set_cairo_context_path = MANIM_PATH
    try:
        monkeypatch.setattr(pycairo, "cairo_version_string", lambda: "0.0.1")
        why = cairo_paths.install()
        assert why is not None and "0.0.1" in why
        assert Camera.set_cairo_context_path is MANIM_PATH
    finally:
        monkeypatch.undo()
        assert cairo_paths.install() is None


def test_a_shape_drawn_again_is_looked_up_by_its_points_and_a_moved_one_is_built_anew(installed):
    """The path cache's key is the points themselves: the same points give the cached path, points changed in
    place (an animation moves a shape) give the path of the new points, and an over-full cache starts again."""
    camera, circle = Camera(), Circle()
    cairo_paths._cache.clear()
    first = paths(circle, camera)
    again = paths(circle, camera)
    assert first == again and first[0] == first[1]
    assert any(k[1] == circle.points.tobytes() for k in cairo_paths._cache)
    circle.shift(np.array([0.5, -0.25, 0]))                 # the same object, its points changed in place
    moved = paths(circle, camera)
    assert moved[0] == moved[1] != first[1]
    limit = cairo_paths.CACHE_BYTES
    try:
        cairo_paths.CACHE_BYTES = 1                         # every new shape overfills it: emptied, then kept
        square = Square()
        assert paths(square, camera)[0] == paths(square, camera)[1]
        assert len(cairo_paths._cache) == 1
    finally:
        cairo_paths.CACHE_BYTES = limit
