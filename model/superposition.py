"""The superposition lab: how many almost-perpendicular directions fit in d dimensions?

Part 1, packing. Start from N random unit vectors in d dimensions and push every pair whose
cosine is further from 0 than a margin back towards 90 degrees. Report the angle distribution
before and after, and the bounds that say how far any arrangement could ever get.

Part 1c, the Johnson-Lindenstrauss lemma: the dimension it guarantees for N points at a distortion eps, and the
worst distortion one seeded random projection of N perpendicular directions actually makes.

Part 2, the toy model of Elhage et al. (2022), "Toy Models of Superposition":
    x' = ReLU(W^T W x + b),   W is m x n (n features squeezed into m hidden dimensions)
trained on sparse features. Dense data: only the m most important features get a direction.
Sparse data: all n features share the m dimensions, e.g. five features on a pentagon in 2-D.

Everything is seeded with a torch.Generator, so the same arguments give the same numbers.
"""

from __future__ import annotations

import math
import operator
import time

import torch
import torch.nn.functional as F

from .errors import ModelError

PERCENTILES = (1, 5, 50, 95, 99)
HIST_EDGES_DEG = list(range(0, 181))  # 1-degree bins from 0 to 180
BLOCK = 2000  # rows per block of the N x N cosine matrix (a 2000 x 2000 block is 16 MB)


# --------------------------------------------------------------------------- input checks

def _check_int(name: str, value, lo: int) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)  # int, numpy integer, ... but not 2.5 or "3"
    except TypeError:
        raise ModelError(f"{name} must be an integer, got {value!r}") from None
    if value < lo:
        raise ModelError(f"{name} must be at least {lo}, got {value}")
    return value


def _check_positive(name: str, value) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ModelError(f"{name} must be a positive number, got {value}")
    return value


def _check_sparsity(value) -> float:
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"sparsity must be a number in [0, 1), got {value!r}") from None
    if not (0.0 <= s < 1.0):  # also rejects NaN
        raise ModelError(f"sparsity must be in [0, 1), got {value!r}")
    return s


# --------------------------------------------------------------------------- part 1: packing

def _unit(V: torch.Tensor) -> torch.Tensor:
    return V / V.norm(dim=1, keepdim=True).clamp_min(1e-12)


def _blocks(n: int):
    """Every unordered pair of row blocks (A, B) with A <= B: each pair of vectors is seen once."""
    starts = range(0, n, BLOCK)
    for a in starts:
        for b in starts:
            if b >= a:
                yield slice(a, a + BLOCK), slice(b, b + BLOCK), a == b


def _hinge_gradient(V: torch.Tensor, margin: float) -> torch.Tensor:
    """Gradient of  L = 1/2 sum_{i != j} (|cos_ij| - margin)_+^2  with respect to each v_i.

    dL/dv_i = 2 sum_j s_ij v_j  with  s_ij = softshrink(cos_ij, margin) = sign(c)(|c| - margin)_+.
    The factor 2 is folded into the step size. Computed block by block: the full 10,000 x 10,000
    matrix of cosines would be 400 MB.
    """
    grad = torch.zeros_like(V)
    for A, B, diagonal in _blocks(len(V)):
        C = V[A] @ V[B].T                    # cosines between the two blocks (unit vectors)
        if diagonal:
            C.fill_diagonal_(0.0)            # cos(v_i, v_i) = 1 is not a pair
        S = F.softshrink(C, margin)          # zero for every pair already within the margin
        grad[A] += S @ V[B]
        if not diagonal:
            grad[B] += S.T @ V[A]
    return grad


def _tighten(V: torch.Tensor) -> torch.Tensor:
    """Move to the nearest tight frame (V^T V = N/d I), then back onto the unit sphere.

    Welch's bound, mean over pairs of cos^2 >= (N - d) / (d (N - 1)), holds with equality exactly
    for unit-norm tight frames, so this keeps the bulk of the cosines at their floor. It also stops
    the one collective motion in which all vectors drift together towards a common axis.
    """
    n, d = V.shape
    if n < d:
        return V
    evals, evecs = torch.linalg.eigh(V.T @ V * (d / n))
    return _unit(V @ (evecs * evals.clamp_min(1e-12).rsqrt()) @ evecs.T)


def _pair_cosines(V: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
    return (V[i] * V[j]).sum(1).clamp(-1.0, 1.0)


def _extreme_cosines(V: torch.Tensor) -> tuple[float, float]:
    """Largest and smallest cosine over ALL pairs i != j (not just the sample)."""
    hi, lo = -1.0, 1.0
    for A, B, diagonal in _blocks(len(V)):
        C = V[A] @ V[B].T
        if diagonal:
            if C.shape[0] < 2:
                continue
            off = ~torch.eye(C.shape[0], dtype=torch.bool)
            C = C[off]
        hi, lo = max(hi, C.max().item()), min(lo, C.min().item())
    return min(hi, 1.0), max(lo, -1.0)


def pair_histogram(V: torch.Tensor) -> dict:
    """The angles of ALL N(N-1)/2 pairs, exactly (not a sample): counts in 1-degree bins from 0 to 180, and the
    closest and the most opposed pair. Computed block by block, each pair once, the products in float64 (so a bin
    edge is decided to about 1e-13 degrees, not float32's 1e-5)."""
    counts = torch.zeros(len(HIST_EDGES_DEG) - 1, dtype=torch.int64)
    hi, lo = -1.0, 1.0
    V = V.double()
    for A, B, diagonal in _blocks(len(V)):
        C = V[A] @ V[B].T
        if diagonal:
            r, c = torch.triu_indices(C.shape[0], C.shape[1], offset=1)
            C = C[r, c]
        if C.numel() == 0:
            continue
        C = C.clamp(-1.0, 1.0)
        hi, lo = max(hi, C.max().item()), min(lo, C.min().item())
        angles = torch.rad2deg(torch.arccos(C)).reshape(-1)
        bins = angles.floor().clamp(0, len(counts) - 1).long()       # [k, k + 1) degrees; 180 joins the last bin
        counts += torch.bincount(bins, minlength=len(counts))
    n = len(V)
    pairs = n * (n - 1) // 2
    return {"edges_deg": HIST_EDGES_DEG, "counts": counts.tolist(), "pairs": pairs,
            "min_deg": math.degrees(math.acos(min(hi, 1.0))), "max_deg": math.degrees(math.acos(max(lo, -1.0))),
            "within_89_91": (counts[89] + counts[90]).item() / max(pairs, 1)}   # bins [89, 90) and [90, 91)


def angle_stats(V: torch.Tensor, i: torch.Tensor, j: torch.Tensor) -> dict:
    """Angle distribution over the sampled pairs (i, j), plus the exact extremes over all pairs."""
    angles = torch.rad2deg(torch.arccos(_pair_cosines(V, i, j).double()))
    q = torch.quantile(angles, torch.tensor(PERCENTILES, dtype=torch.float64) / 100)
    counts = torch.histc(angles, bins=len(HIST_EDGES_DEG) - 1, min=HIST_EDGES_DEG[0], max=HIST_EDGES_DEG[-1])
    hi, lo = _extreme_cosines(V)
    return {
        "percentiles_deg": {f"p{p}": v for p, v in zip(PERCENTILES, q.tolist())},
        "min_deg": math.degrees(math.acos(hi)),   # the closest pair of all N(N-1)/2
        "max_deg": math.degrees(math.acos(lo)),   # the most opposed pair of all
        "within_89_91": ((angles >= 89) & (angles <= 91)).double().mean().item(),
        "mean_cos2": (torch.cos(torch.deg2rad(angles)) ** 2).mean().item(),
        "histogram": {"edges_deg": HIST_EDGES_DEG, "counts": [int(c) for c in counts.tolist()]},
    }


def packing_bounds(n_vectors: int, dim: int) -> dict:
    """What no arrangement of N unit vectors in d dimensions can beat.

    Welch:      mean_{i != j} cos^2 >= (N - d) / (d (N - 1)), hence also max |cos| >= its square root.
    Levenshtein: for N > d(d + 1)/2 (real vectors), max cos^2 >= (3N - d^2 - 2d) / ((d + 2)(N - d)).
    band_deg is the resulting floor on the worst pair's distance from 90 degrees.
    """
    n, d = _check_int("n_vectors", n_vectors, 2), _check_int("dim", dim, 1)
    welch = max(n - d, 0) / (d * (n - 1))
    levenshtein = (3 * n - d * d - 2 * d) / ((d + 2) * (n - d)) if 2 * n > d * (d + 1) else 0.0
    max_cos = math.sqrt(max(welch, levenshtein))
    return {
        "welch_mean_cos2": welch,
        "welch_rms_deg": math.degrees(math.asin(math.sqrt(welch))),
        "levenshtein_max_cos": math.sqrt(levenshtein) if levenshtein else None,
        "max_cos_at_least": max_cos,
        "band_deg": math.degrees(math.asin(min(max_cos, 1.0))),  # some pair lies outside 90 +- band
    }


def pack_near_orthogonal(n_vectors: int = 10_000, dim: int = 100, steps: int = 20, seed: int = 0,
                         lr: float = 2.0, progress=None, margin: float | None = None,
                         sample_pairs: int = 200_000, return_vectors: bool = False, observe=None) -> dict:
    """Optimise n_vectors unit vectors in `dim` dimensions so that every pairwise angle is near 90.

    Loss: 1/2 sum over pairs of (|cos| - margin)_+^2, margin = 2/sqrt(dim) by default (random unit
    vectors have cos ~ N(0, 1/dim), so that is two standard deviations). Each step is a gradient
    step along the sphere, with the step size scaled for the number of pairs pushing on each vector,
    then a projection back to unit vectors in a tight frame. progress(step, steps) is called after
    each step. Percentiles, the 89-91 fraction and the histogram use one fixed sample of pairs, the
    same before and after; min_deg and max_deg are exact over all pairs. With return_vectors the
    optimised (n_vectors, dim) tensor is included under "vectors". observe(step, V) is called with the
    vectors at the start (step 0) and after every step (for recording snapshots; it must not change V).
    """
    _check_int("n_vectors", n_vectors, 2)
    _check_int("dim", dim, 1)
    _check_int("steps", steps, 0)
    _check_int("seed", seed, 0)
    _check_int("sample_pairs", sample_pairs, 1)
    lr = _check_positive("lr", lr)
    margin = 2 / math.sqrt(dim) if margin is None else _check_positive("margin", margin)

    t0 = time.perf_counter()
    g = torch.Generator().manual_seed(seed)
    V = _unit(torch.randn(n_vectors, dim, generator=g))
    i = torch.randint(0, n_vectors, (sample_pairs,), generator=g)       # a fixed sample of pairs
    j = (i + torch.randint(1, n_vectors, (sample_pairs,), generator=g)) % n_vectors  # j != i
    before = angle_stats(V, i, j)

    # Each vector is pushed by about n_active pairs. The curvature of its part of the loss is then
    # the top eigenvalue of sum_j v_j v_j^T over those pairs, about (1 + sqrt(n_active/d))^2 for
    # random directions (Marchenko-Pastur); dividing by it keeps the step size stable at any N, d.
    n_active = (n_vectors - 1) * (_pair_cosines(V, i, j).abs() > margin).double().mean().item()
    step_size = lr / (1 + math.sqrt(n_active / dim)) ** 2

    start = time.perf_counter()
    if observe is not None:
        observe(0, V)
    for step in range(steps):
        grad = _hinge_gradient(V, margin)
        grad -= (grad * V).sum(1, keepdim=True) * V    # keep only the part along the sphere
        V = _tighten(_unit(V - step_size * grad))
        if observe is not None:
            observe(step + 1, V)
        if progress is not None:
            progress(step + 1, steps)
    seconds = time.perf_counter() - start

    after = angle_stats(V, i, j)
    result = {
        "n_vectors": n_vectors, "dim": dim, "steps": steps, "seed": seed, "lr": lr,
        "margin_cos": margin, "margin_deg": math.degrees(math.asin(min(margin, 1.0))),
        "sample_pairs": sample_pairs,
        "seconds": seconds,                               # the optimisation alone
        "seconds_total": time.perf_counter() - t0,        # including the statistics
        "before": before, "after": after,
        "bounds": packing_bounds(n_vectors, dim),
    }
    if return_vectors:
        result["vectors"] = V
    return result


# --------------------------------------------------------------------------- part 1b: room within a band

def _check_band(eps_deg) -> float:
    eps = _check_positive("eps_deg", eps_deg)
    if eps >= 90:
        raise ModelError(f"eps_deg must be below 90, got {eps_deg}")
    return eps


def bound_count(dim: int, eps_deg: float) -> int | None:
    """The most unit vectors in `dim` dimensions that Welch's and Levenshtein's bounds (packing_bounds) allow to keep
    every pair within 90 +- eps_deg; None when neither bound forbids any number.

    With c = sin(eps): Welch allows N <= d (1 - c^2) / (1 - c^2 d) when c^2 d < 1 (and any N otherwise);
    Levenshtein, for N > d(d + 1)/2, allows N <= d (d + 2)(1 - c^2) / (3 - c^2 (d + 2)) when c^2 (d + 2) < 3.
    """
    d, eps = _check_int("dim", dim, 1), _check_band(eps_deg)
    c2 = math.sin(math.radians(eps)) ** 2
    welch = math.floor(d * (1 - c2) / (1 - c2 * d) + 1e-9) if c2 * d < 1 else None
    lev = None
    if c2 * (d + 2) < 3:
        n = math.floor(d * (d + 2) * (1 - c2) / (3 - c2 * (d + 2)) + 1e-9)
        lev = max(n, d * (d + 1) // 2)          # it only speaks above d(d + 1)/2
    limits = [n for n in (welch, lev) if n is not None]
    return max(min(limits), d) if limits else None


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def random_pair_outside(dim: int, eps_deg: float, points: int = 200_001) -> float:
    """P(|cos| > sin eps) for two independent uniformly random unit vectors in `dim` dimensions: the chance that a
    random pair falls outside 90 +- eps_deg. The cosine t has density (1 - t^2)^((d - 3)/2) / B(1/2, (d - 1)/2)
    on [-1, 1]; the tail is integrated numerically (float64, a grid packed towards sin eps, in log space)."""
    d, eps = _check_int("dim", dim, 2), _check_band(eps_deg)
    if d == 2:        # in a plane the angle between two random directions is uniform on [0, 180]: exact, and the
        return 1 - 2 * eps / 180   # cosine's density (1 - t^2)^(-1/2) is infinite at t = 1, so the grid cannot take it
    c = math.sin(math.radians(eps))
    u = torch.linspace(0, 1, points, dtype=torch.float64)
    t = c + (1 - c) * u ** 3
    log_f = (d - 3) / 2 * torch.log1p(-t.clamp(max=1 - 1e-300) ** 2)
    if d == 3:
        log_f = torch.zeros_like(t)
    peak = log_f.max()
    tail = torch.trapezoid(torch.exp(log_f - peak), t).item()
    log_p = math.log(2) + math.log(tail) + peak.item() - _log_beta(0.5, (d - 1) / 2)
    return min(math.exp(log_p), 1.0)


def random_count_estimate(dim: int, eps_deg: float) -> float:
    """How many directions random vectors give within 90 +- eps_deg: draw M = 1/p random unit vectors (p: the chance
    a pair falls outside, random_pair_outside), then drop one vector of each pair outside. On average M^2 p / 2
    pairs are outside, so some draw keeps at least M - M^2 p / 2 = 1/(2p) vectors with every pair inside (the
    probabilistic method: the estimate behind the Johnson-Lindenstrauss lemma). At least 1."""
    return max(1.0, 1 / (2 * random_pair_outside(dim, eps_deg)))


def measured_count(dim: int, eps_deg: float, steps: int = 300, seed: int = 0, limit: int | None = None) -> dict:
    """The most unit vectors the lab's packing (pack_near_orthogonal, margin sin(eps)/2) gets to keep EVERY pair
    within 90 +- eps_deg, trying N = dim, dim + 1, ... until it fails (or N reaches `limit`, default bound_count
    + 1). Returns the count, the closest pair reached at that count and at the first failure."""
    d, eps = _check_int("dim", dim, 2), _check_band(eps_deg)
    margin = math.sin(math.radians(eps)) / 2
    ceiling = bound_count(d, eps)
    limit = limit if limit is not None else (ceiling + 1 if ceiling is not None else 10 * d)
    best, worst_ok, failed = None, None, None
    for n in range(d, limit + 1):
        r = pack_near_orthogonal(n, d, steps=steps, seed=seed, margin=margin, sample_pairs=1)
        off = max(90 - r["after"]["min_deg"], r["after"]["max_deg"] - 90)
        if off > eps:
            failed = {"n": n, "furthest_from_90_deg": off}
            break
        best, worst_ok = n, off
    return {"dim": d, "eps_deg": eps, "count": best, "furthest_from_90_deg": worst_ok, "first_failure": failed,
            "steps": steps, "seed": seed, "margin_cos": margin, "bound_count": ceiling}


# --------------------------------------------------------------------------- part 1c: the Johnson-Lindenstrauss lemma

def _jl_rate(eps: float) -> float:
    return eps * eps / 2 - eps ** 3 / 3


def _check_distortion(eps) -> float:
    eps = _check_positive("eps", eps)
    if eps >= 1:
        raise ModelError(f"eps must be below 1, got {eps}")
    return eps


def jl_dimension(n_points: int, eps: float) -> int:
    """The dimension the Johnson-Lindenstrauss lemma guarantees, in the form of Dasgupta and Gupta (2003, "An
    elementary proof of a theorem of Johnson and Lindenstrauss", Theorem 2.1): for 0 < eps < 1 and any n points in
    any R^d there is a map into R^k that keeps every pair's squared distance between (1 - eps) and (1 + eps) times
    its own, for every k >= 4 ln(n) / (eps^2/2 - eps^3/3). Returns the smallest such k."""
    n, eps = _check_int("n_points", n_points, 2), _check_distortion(eps)
    return math.ceil(4 * math.log(n) / _jl_rate(eps) - 1e-9)


def jl_tenfold_dims(eps: float) -> float:
    """How many more dimensions the lemma's k needs for 10 times as many points at the same eps (its k grows with
    ln n): 4 ln(10) / (eps^2/2 - eps^3/3). Read backwards: every that many dimensions more hold 10 times the points."""
    return 4 * math.log(10) / _jl_rate(_check_distortion(eps))


def jl_epsilons(n_points: int, max_dim: int, start: float = 0.5) -> list[float]:
    """The distortions the chapter shows for n points: `start`, then halved again and again while the lemma's
    dimension for it (jl_dimension) stays at most max_dim."""
    out, eps = [], _check_distortion(start)
    max_dim = _check_int("max_dim", max_dim, 1)
    while jl_dimension(n_points, eps) <= max_dim:
        out.append(eps)
        eps /= 2
    return out


def random_projection_distortion(n_points: int, dim: int, seed: int = 0) -> dict:
    """A seeded random projection of n points into `dim` dimensions, and the worst distortion it makes.

    The points are the n axes of an n-dimensional space (n mutually perpendicular unit vectors, every pair sqrt(2)
    apart). The projection is one k x n matrix R (k = dim) of independent normal entries of variance 1/k, drawn with
    torch.Generator().manual_seed(seed) as torch.randn(n, k) (row i is R's column i: where axis i lands). Over ALL
    n(n-1)/2 pairs, the ratio of the squared distance after the projection to before (2), block by block, each pair
    once, in float64; the worst distortion is the largest |ratio - 1|.
    """
    n, k = _check_int("n_points", n_points, 2), _check_int("dim", dim, 1)
    _check_int("seed", seed, 0)
    g = torch.Generator().manual_seed(seed)
    X = (torch.randn(n, k, generator=g, dtype=torch.float64) / math.sqrt(k))
    sq = (X * X).sum(1)
    lo, hi = math.inf, -math.inf
    for A, B, diagonal in _blocks(n):
        D = sq[A, None] + sq[None, B] - 2 * (X[A] @ X[B].T)       # squared distances between the two blocks
        if diagonal:
            r, c = torch.triu_indices(D.shape[0], D.shape[1], offset=1)
            D = D[r, c]
        if D.numel() == 0:
            continue
        lo, hi = min(lo, D.min().item() / 2), max(hi, D.max().item() / 2)
    return {"n_points": n, "dim": k, "seed": seed, "pairs": n * (n - 1) // 2, "min_ratio": lo, "max_ratio": hi,
            "worst_distortion": max(1 - lo, hi - 1)}


# --------------------------------------------------------------------------- part 2: toy model

def feature_importance(n_features: int) -> torch.Tensor:
    return 0.9 ** torch.arange(n_features, dtype=torch.float32)


def sample_features(batch: int, n_features: int, sparsity: float, g: torch.Generator) -> torch.Tensor:
    """Each feature is 0 with probability `sparsity`, otherwise uniform in [0, 1]."""
    present = torch.rand(batch, n_features, generator=g) >= sparsity
    return torch.rand(batch, n_features, generator=g) * present


def toy_forward(W: torch.Tensor, b: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x' = ReLU(W^T W x + b) for k independent instances: W (k, m, n), b (k, n), x (batch, n).

    Written as broadcast products and sums rather than matmuls: at these sizes (m = 2, n = 5)
    torch would hand each tiny matmul to a thread pool, which costs far more than the arithmetic.
    """
    W = W[:, None]                                          # (k, 1, m, n)
    h = (W * x[None, :, None, :]).sum(-1)                   # h_m = sum_n W_mn x_n      (k, batch, m)
    return torch.relu((W * h[..., None]).sum(-2) + b[:, None, :])  # ReLU(sum_m W_mn h_m + b_n)


def toy_loss(W, b, x, importance) -> torch.Tensor:
    """Importance-weighted squared error, averaged over the batch: one loss per instance."""
    return (importance * (x - toy_forward(W, b, x)) ** 2).sum(-1).mean(-1)


def feature_geometry(W: torch.Tensor) -> dict:
    """Norms ||W_i||, dimensions per feature D_i and angles between the columns W_i of W (m x n)."""
    norms = W.norm(dim=0)
    W_hat = W / norms.clamp_min(1e-12)
    overlap = (W_hat.T @ W) ** 2                           # (W^_i . W_j)^2
    D = norms ** 2 / overlap.sum(1).clamp_min(1e-12)       # D_i = ||W_i||^2 / sum_j (W^_i . W_j)^2
    cos = (W_hat.T @ W_hat).clamp(-1, 1)
    out = {
        "norms": norms.tolist(),
        "dims_per_feature": D.tolist(),
        "angles_deg": torch.rad2deg(torch.arccos(cos)).tolist(),  # n x n, between columns
    }
    if W.shape[0] == 2:  # in a plane: the direction of each feature and the gaps between neighbours
        polar = torch.rad2deg(torch.atan2(W[1], W[0])) % 360
        ordered = polar.sort().values
        gaps = torch.diff(torch.cat([ordered, ordered[:1] + 360]))
        out["polar_deg"] = polar.tolist()
        out["neighbour_gaps_deg"] = gaps.tolist()
    return out


def train_toy_model(sparsity: float, n_features: int = 5, n_hidden: int = 2, steps: int = 1500,
                    batch: int = 256, seed: int = 0, lr: float = 2e-2, instances: int = 8,
                    eval_batch: int = 65536, checkpoints=()) -> dict:
    """Train `instances` copies of the toy model side by side and keep the one with lowest loss.

    As in the paper: Adam, a fresh batch of features each step, Xavier-normal W, zero b; here the
    learning rate also decays on a cosine schedule. Each copy's loss is measured on one fixed
    evaluation batch, and the best copy's W (m x n), b, norms and dimensions per feature returned.
    The defaults keep instances * batch * m * n under 32768 numbers, below which torch runs each
    operation on the calling thread: that makes a run take seconds even on a busy machine.

    `checkpoints` lists steps (0 = the initial weights, up to `steps`) at which the kept copy's W, b, its loss on
    the evaluation batch and its geometry are recorded, under "checkpoints"; recording does not change the run.
    """
    sparsity = _check_sparsity(sparsity)
    _check_int("n_features", n_features, 1)
    _check_int("n_hidden", n_hidden, 1)
    _check_int("steps", steps, 1)
    _check_int("batch", batch, 1)
    _check_int("seed", seed, 0)
    _check_int("instances", instances, 1)
    _check_int("eval_batch", eval_batch, 1)
    lr = _check_positive("lr", lr)
    marks = sorted({_check_int("checkpoint", c, 0) for c in checkpoints})
    if marks and marks[-1] > steps:
        raise ModelError(f"a checkpoint must be at most steps ({steps}), got {marks[-1]}")

    g = torch.Generator().manual_seed(seed)
    importance = feature_importance(n_features)
    std = math.sqrt(2 / (n_hidden + n_features))
    W = torch.nn.Parameter(torch.randn(instances, n_hidden, n_features, generator=g) * std)
    b = torch.nn.Parameter(torch.zeros(instances, n_features))
    opt = torch.optim.Adam([W, b], lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.5 * (1 + math.cos(math.pi * t / steps)))

    saved = {}                       # step -> (W, b) of every copy, before the best one is known
    start = time.perf_counter()
    for step in range(steps + 1):
        if step in marks:
            saved[step] = (W.detach().clone(), b.detach().clone())
        if step == steps:
            break
        x = sample_features(batch, n_features, sparsity, g)
        loss = toy_loss(W, b, x, importance).sum()  # instances are independent: sum their losses
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        schedule.step()
    seconds = time.perf_counter() - start

    with torch.no_grad():
        x = sample_features(eval_batch, n_features, sparsity, torch.Generator().manual_seed(seed + 1))
        losses = toy_loss(W, b, x, importance)
        best = int(losses.argmin())
        recorded = []
        for step, (W_s, b_s) in sorted(saved.items()):
            loss_s = toy_loss(W_s[best:best + 1], b_s[best:best + 1], x, importance)[0]
            recorded.append({"step": step, "W": W_s[best].tolist(), "b": b_s[best].tolist(),
                             "loss": loss_s.item(), **feature_geometry(W_s[best])})
    W_best, b_best = W.detach()[best], b.detach()[best]
    return {
        "sparsity": sparsity, "n_features": n_features, "n_hidden": n_hidden, "steps": steps,
        "batch": batch, "seed": seed, "lr": lr, "importance": importance.tolist(),
        "W": W_best.tolist(), "b": b_best.tolist(),
        **feature_geometry(W_best),
        "loss": losses[best].item(), "instance": best, "instance_losses": losses.tolist(),
        **({"checkpoints": recorded} if marks else {}),
        "seconds": seconds,
    }


def toy_model_sweep(sparsities=(0.0, 0.7, 0.9, 0.97, 0.99), **kwargs) -> list[dict]:
    """train_toy_model at each sparsity, same seed and settings."""
    return [train_toy_model(s, **kwargs) for s in sparsities]
