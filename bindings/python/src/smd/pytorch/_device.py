"""Capture of tensors where they live (a GPU) for ``smd.pytorch.Hook``.

Two paths, chosen per tensor from what the hook's collections want at the current step
(``smd_hook_due_reductions``):

* **Reductions and histograms** (no raw value, no TensorBoard scalar): the reductions, and the
  TensorBoard histograms where they are due, are computed on the tensor's device, batched over
  every tensor offered together (the parameters at the start of a step, the gradients of one
  backward pass), with a fixed number of kernel launches per batch (``torch.cat`` laying the
  flattened tensors out as padded rows, row reductions accumulating in float64, then
  ``torch.segment_reduce`` over each tensor's rows; for histograms one ``torch.bucketize`` over
  smd's bucket edges and one ``torch.bincount`` of (tensor, bucket) keys), whatever the number of
  tensors. Only a small
  float64 matrix (tensors x statistics, and the bucket counts of the histogram rows) comes back to
  the host, in one non-blocking copy into pinned memory. The numbers are saved through
  ``smd_hook_save_reductions``, which writes exactly what the hook writes for reductions and
  histograms it computes itself. Accumulation is in float64 (exact conversions of
  float16/bfloat16/float32 elements), so a reduction (and a histogram's sum and sum of squares)
  equals the host path's up to the rounding of a float64 sum in another order
  (docs/frameworks.md gives the bound); bucket counts, min and max are exact.
* **The value** (raw tensor, or a TensorBoard scalar): copied with ``non_blocking`` into pinned host
  buffers that are allocated once and reused, on a side stream that first waits for the
  producing stream, and handed to smd's writer without another copy (DLPack, adopted) once the
  copy has completed. The buffers are bounded by the hook's memory budget: when none is free,
  the capture waits for smd's writer to release one (backpressure), never dropping a tensor.
  The producing stream waits for the copy before the optimizer's next in-place update (at the
  end of the backward pass, or at once for module tensors), so the value saved is the one the
  hook saw.

Everything is handed to smd before the hook's step ends (``flush``), so each record lands in
the step it belongs to. CPU tensors take the host path of the hook (zero-copy views, reductions
on smd's writer thread) unless ``SMD_TORCH_DEVICE_CAPTURE=always``, which sends them through
this module as well (the test suite uses it to exercise these paths without a GPU);
``SMD_TORCH_DEVICE_CAPTURE=off`` sends every tensor through the host path.
"""
import collections
import math
import os
import time

import numpy as np
import torch

from smd import smdc as _smd
from smd.hook import _resolved
from smd._reductions import HISTOGRAM_STATS as _HISTOGRAM_STATS, STATS as _STATS, finish_rows, histogram_of
from smd._reductions import needs as _needs  # noqa: F401 (re-exported)

# Floating dtypes whose reductions are computed on the device (their float64 conversion is
# exact); others (integers, bool, complex) take the value path.
_REDUCIBLE = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

# Which backward pass runs now (autograd's graph task id; missing in old torch releases).
_graph_task_id = getattr(torch._C, "_current_graph_task_id", None)

# The most elements reduced in one batch (its float64 copy is 8 bytes an element); a larger
# tensor is reduced alone.
BATCH_ELEMENTS = 1 << 25



class _Ready:
    """An event that has completed (CPU copies are synchronous)."""

    def query(self):
        return True

    def synchronize(self):
        pass


class CpuBackend:
    """Host memory and synchronous copies: the paths' logic without a GPU."""

    name = "cpu"

    def host_buffer(self, nbytes):
        return torch.empty(nbytes, dtype=torch.uint8)

    def copy_to_host(self, dst, src):
        dst.copy_(src)
        return _Ready()

    def producer_waits(self, events):
        pass

    def scalars_to_host(self, t):
        return t.to("cpu"), _Ready()


class CudaBackend:
    """Pinned host buffers, copies on a side stream ordered after the producing stream."""

    name = "cuda"

    def __init__(self, device):
        self.device = device
        self.side = torch.cuda.Stream(device=device)

    def host_buffer(self, nbytes):
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

    def copy_to_host(self, dst, src):
        produced = torch.cuda.Event()
        produced.record(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.side):
            self.side.wait_event(produced)
            dst.copy_(src, non_blocking=True)
            done = torch.cuda.Event()
            done.record(self.side)
        # The caching allocator must not hand src's memory to another tensor before the copy.
        src.record_stream(self.side)
        return done

    def producer_waits(self, events):
        stream = torch.cuda.current_stream(self.device)
        for ev in events:
            stream.wait_event(ev)

    def scalars_to_host(self, t):
        host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
        host.copy_(t, non_blocking=True)
        ev = torch.cuda.Event()
        ev.record(torch.cuda.current_stream(t.device))
        return host, ev


class _Slot:
    __slots__ = ("buf", "cap", "flag", "state", "temporary", "pool")

    def __init__(self, buf, cap, temporary, pool):
        self.pool = pool
        self.buf = buf
        self.cap = cap
        self.flag = np.ones(1, dtype=np.uint8)  # set to 1 by smd's writer when it releases the buffer
        self.state = "free"  # free, copying, handed
        self.temporary = temporary


class StagingPool:
    """Host staging buffers, allocated once and reused, at most `budget` bytes in all (a tensor
    larger than the whole budget gets a buffer of its own, freed after use, when nothing else is
    held). ``acquire`` waits (``wait_for_release``) while the budget is held: backpressure.
    A step saves a hundred tensors or more, so no call looks at every buffer: free buffers are
    kept by capacity, and handed ones (``handed``) in the order smd's writer releases them."""

    def __init__(self, backend, budget):
        self.backend = backend
        self.budget = int(budget)
        self.slots = []          # every buffer held
        self._free = {}          # capacity -> free buffers of it
        self._handed = collections.deque()  # handed to smd's writer, oldest first
        self.allocated = 0       # bytes of buffers held by the pool
        self.peak = 0
        self.allocations = 0     # buffers ever allocated
        self.waits = 0           # acquires that waited for a release

    def handed(self, slot):
        """The slot's buffer now belongs to smd's writer until it sets the slot's flag."""
        slot.state = "handed"
        self._handed.append(slot)

    def _reclaim(self):
        # The writer writes, and so releases, buffers in the order they were handed to it; one
        # released out of that order waits for those before it (wait_for_release flushes).
        h = self._handed
        while h and h[0].flag[0]:
            s = h.popleft()
            s.state = "free"
            if s.temporary:
                self._drop(s)
            else:
                self._free.setdefault(s.cap, []).append(s)
        return any(self._free.values())

    def _drop(self, s):
        self.slots.remove(s)
        self.allocated -= s.cap

    def _alloc(self, cap, temporary):
        s = _Slot(self.backend.host_buffer(cap), cap, temporary, self)
        self.slots.append(s)
        self.allocated += cap
        self.allocations += 1
        self.peak = max(self.peak, self.allocated)
        return s

    def _take_free(self, cap):
        """The smallest free buffer of at least cap bytes, or None."""
        same = self._free.get(cap)
        if not same:
            fits = [c for c, lst in self._free.items() if lst and c >= cap]
            if not fits:
                return None
            same = self._free[min(fits)]
        return same.pop()

    def acquire(self, nbytes, wait_for_release):
        """A free buffer of at least nbytes. wait_for_release() is called, repeatedly, while the
        budget is exhausted: it must make smd's writer progress (hand over copies, flush)."""
        cap = max(4096, -(-nbytes // 4096) * 4096)
        waited = False
        while True:
            self._reclaim()
            s = self._take_free(cap)
            if s is None and self.allocated + cap <= self.budget:
                s = self._alloc(cap, False)
            if s is not None:
                s.state = "copying"
                return s
            # Free buffers too small for this tensor give their room to a bigger one.
            small = [s for lst in self._free.values() for s in lst]
            if small:
                self._free.clear()
                for s in small:
                    self._drop(s)
                continue
            if not self.slots:  # larger than the whole budget, nothing else held
                s = self._alloc(cap, cap > self.budget)
                s.state = "copying"
                return s
            if not waited:
                self.waits += 1
                waited = True
            wait_for_release()

    def in_use(self):
        return sum(s.cap for s in self.slots if s.state != "free")


def _plain(t):
    """The tensor's value as a dense tensor without torch's lazy flags (smd.hook._resolved)."""
    return _resolved(t.to_dense() if t.layout != torch.strided else t)


def _flat(t):
    return _plain(t).reshape(-1)


_CHUNK = 1 << 16  # elements a row holds at most


def _row_length(total, n):
    """The row length for n tensors of `total` elements: a power of two (or _CHUNK), at most
    _CHUNK, halved (down to 64) while the padding, less than a row per tensor, could exceed a
    quarter of the elements (small tensors padded to 65,536 elements each would multiply the
    bytes read)."""
    c = _CHUNK
    while c > 64 and 4 * n * c > total:
        c //= 2
    return c


class _Layout:
    """How a batch of tensors of given sizes and dtypes is laid out as rows, with the index
    tensors that describe it already on the device. A hook offers the same tensors (a model's
    gradients, its parameters) step after step, so layouts are kept (_layouts) and a step's batch
    costs no host-side arithmetic per element row, no host-to-device copy of them, and no new
    padding tensor."""

    def __init__(self, counts, dtypes, dev):
        n, total = len(counts), sum(counts)
        self.total = total
        self.C = C = _row_length(total, n)
        rows_per = [max(1, -(-c // C)) for c in counts]  # empty: a row of padding
        self.rows = rows = sum(rows_per)
        valid = []  # elements of each row that are the tensor's
        for c, k in zip(counts, rows_per):
            valid += [C] * (k - 1) + [c - (k - 1) * C]
        # A tensor's last row when it is partial (its padding must not count among extremes),
        # and the offset of the tensor's first element in the laid-out rows.
        part, first, first_row = [], [], 0
        for c, k in zip(counts, rows_per):
            if c < k * C:
                part.append(first_row + k - 1)
                first.append(first_row * C)
            first_row += k
        carrier = dtypes[0]
        for d in dtypes[1:]:
            carrier = torch.promote_types(carrier, d)  # what torch.cat makes (exact for these)
        zeros = torch.zeros(C, dtype=carrier, device=dev)
        self.pads = [zeros[:k * C - c] if k * C - c else None for c, k in zip(counts, rows_per)]
        p = len(part)
        host = torch.tensor(counts + rows_per + valid + [int(c == 0) for c in counts] + part + first
                            + [valid[r] for r in part], dtype=torch.int64).to(dev, non_blocking=True)
        self.lengths, self.per_tensor = host[:n], host[n:2 * n]
        self.valid, o = host[2 * n:2 * n + rows], 2 * n + rows
        self.empty = host[o:o + n].bool()
        o += n
        self.part_rows = host[o:o + p] if p else None
        self.part_first, self.part_valid = host[o + p:o + 2 * p], host[o + 2 * p:o + 3 * p]
        self._part_mask = None

    def part_mask(self):
        """Which elements of the partial rows are the tensors' (a few rows: kept)."""
        if self._part_mask is None:
            dev = self.part_valid.device
            self._part_mask = torch.arange(self.C, device=dev) < self.part_valid[:, None]
        return self._part_mask

    def lay_out(self, flats):
        parts = []
        for f, pad in zip(flats, self.pads):
            if f.numel():
                parts.append(f)
            if pad is not None:
                parts.append(pad)
        return torch.cat(parts).view(self.rows, self.C)


_layouts = {}  # (device, _CHUNK, counts, dtypes) -> _Layout


def _layout(flats):
    dev = flats[0].device
    counts = tuple(f.numel() for f in flats)
    dtypes = tuple(f.dtype for f in flats)
    # (per CUDA stream: the kept tensors were allocated on the stream current then, and the
    # caching allocator may give their memory to that stream again when they are dropped)
    stream = torch.cuda.current_stream(dev).stream_id if dev.type == "cuda" else None
    key = (str(dev), stream, _CHUNK, counts, dtypes)
    lay = _layouts.get(key)
    if lay is None:
        if len(_layouts) >= 32:  # a few batch shapes recur; anything else is not worth keeping
            _layouts.clear()
        lay = _layouts[key] = _Layout(list(counts), dtypes, dev)
    return lay


def batch_statistics(tensors, wanted, histograms=None, edges=None):
    """Per-tensor statistics of a batch of floating tensors on one device, in float64, with a
    fixed number of kernel launches: a (len(tensors), len(cols)) float64 tensor on the device
    and the list of column names. `wanted` is a set of names from _STATS. The "nan" column is
    not a count of NaNs: it is nonzero exactly when the tensor holds one (all that is asked of it).

    histograms (a list of bools, one per tensor) and edges (smd's bucket edges, float64 on the
    device): also the bucket counts of the tensors marked, a (marked, len(edges) - 1) float64
    tensor (exact: counts stay below 2**53), else None. Returns (stats, names, counts).

    The tensors are laid out as rows of C elements (_row_length), each tensor starting a row and
    its last row padded with zeros. Each row is reduced by PyTorch's row reductions: max and min on
    the tensors' own dtype (exact), sums and norms of one float64 copy of the rows (PyTorch's
    sum(dtype=float64) and vector_norm(dtype=float64) would each make their own; zeros add
    nothing to them; products and squared deviations are taken under a mask of the valid
    elements); then each tensor's rows by torch.segment_reduce over the few row results. The
    extremes of a tensor's partial last row are taken again from a copy of those rows alone whose
    padding is the tensor's first element (a repeated element changes no extreme, where a zero
    could win), and replace the zero-padded rows' results. A row's maximum is NaN exactly when the
    row holds a NaN, which gives the "nan" column. Not index_add_ or scatter_reduce_ into one slot
    per tensor: millions of atomic updates of a few dozen addresses serialize on a GPU (64 ms for
    ResNet-18's 62 gradients on an H100); not one segment per tensor (a block alone reads the
    largest tensor: 3.5 ms); and no longer segment reductions of a float64 copy of every element
    (0.97 ms for max, mean and l2 there), which read and write about twice the bytes these do.
    Nothing here waits for the device: the lengths come from the host (once per layout),
    `unsafe=True` skips the check that would read them back, and repeat_interleave is told its
    output size."""
    flats = [_flat(t) for t in tensors]
    lay = _layout(flats)
    dev, C, rows = flats[0].device, lay.C, lay.rows
    lengths, per_tensor, empty = lay.lengths, lay.per_tensor, lay.empty
    x = lay.lay_out(flats)
    cache = {}

    def once(key, make):
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def part():  # the partial rows, padded with their tensor's first element
        return once("part", lambda: torch.where(lay.part_mask(), x.index_select(0, lay.part_rows),
                                                x.view(-1).index_select(0, lay.part_first)[:, None]))

    def row_extreme(key, f):  # f of each row, the partial rows' from part()
        def make():
            v = f(x)
            if lay.part_rows is not None:
                v = v.index_copy(0, lay.part_rows, f(part()))
            return v
        return once(key, make)

    rmax = lambda: row_extreme("rmax", lambda r: r.amax(1))  # noqa: E731
    rmin = lambda: row_extreme("rmin", lambda r: r.amin(1))  # noqa: E731
    mask = lambda: once("mask", lambda: torch.arange(C, device=dev) < lay.valid[:, None])  # noqa
    x64 = lambda: once("x64", lambda: x.to(torch.float64))  # noqa: E731

    def seg(v, how):  # each tensor's rows
        return torch.segment_reduce(v.to(torch.float64), how, lengths=per_tensor, unsafe=True)

    def extreme(v, how, initial):  # an empty tensor's: the initial value (no tensor of it made)
        return seg(v, how).masked_fill(empty, initial)

    def sums(name):  # "sum" or "abssum" (the 1-norm: no temporary of |x|), each tensor's
        def make():
            if name == "abssum":
                return seg(torch.linalg.vector_norm(x64(), 1, dim=1), "sum")
            return seg(x64().sum(1), "sum")
        return once(name, make)

    cols, names = [], []
    for name in [s for s in _STATS if s in wanted]:
        if name == "nan":
            # a row's maximum (minimum) is NaN when the row holds a NaN; zeros padding hides none
            if wanted & {"max", "absmax"}:
                v = rmax()
            elif "min" in wanted:
                v = rmin()
            else:
                v = x.amax(1)
            col = seg(torch.isnan(v), "sum")
        elif name == "min":
            col = extreme(rmin(), "min", math.inf)
        elif name == "max":
            col = extreme(rmax(), "max", -math.inf)
        elif name == "absmax":  # the larger magnitude of a row's extremes
            col = extreme(torch.maximum(rmin().abs(), rmax().abs()), "max", -math.inf)
        elif name == "absmin":
            col = extreme(row_extreme("rabsmin", lambda r: r.abs().amin(1)), "min", math.inf)
        elif name in ("sum", "abssum"):
            col = sums(name)
        elif name == "sumsq":
            col = seg(torch.linalg.vector_norm(x64(), 2, dim=1) ** 2, "sum")  # no temporary of x**2
        elif name in ("prod", "absprod"):
            v = x64().abs() if name == "absprod" else x64()
            col = seg(torch.where(mask(), v, 1.0).prod(1), "prod")
        else:  # var, absvar: each tensor's sum of squared deviations from its mean
            v = x64().abs() if name == "absvar" else x64()
            mean = sums("abssum" if name == "absvar" else "sum") / lengths.clamp(min=1).double()
            per_row = mean.repeat_interleave(per_tensor, output_size=rows)[:, None]
            d = torch.where(mask(), v - per_row, 0.0)
            col = seg((d * d).sum(1), "sum")
        cols.append(col)
        names.append(name)
    counts_out = None
    if histograms is not None and any(histograms):
        flat = torch.cat(flats).to(torch.float64)
        counts_out = _bucket_counts(flat, lengths, lay.total, histograms, edges)
    return torch.stack(cols, dim=1), names, counts_out


def _bucket_counts(flat, lengths, total, histograms, edges):
    """The histogram counts of the marked tensors of a flattened batch: element x of a tensor is
    in bucket i when edges[i] <= x < edges[i + 1] (the last bucket also holds its right edge);
    NaN, infinities and values outside the edges are in none (numpy.histogram's rules, which smd's
    host path follows). One bucketize and one bincount for the whole batch."""
    n, nb = len(histograms), edges.numel() - 1
    dev = flat.device
    # 32-bit indices where the keys fit (always, but for millions of tensors in one batch): half
    # the bytes of an element's bucket, tensor and key
    small = n * nb < 2 ** 31 - 1
    seg = torch.repeat_interleave(torch.arange(n, device=dev, dtype=torch.int32 if small else torch.int64),
                                  lengths, output_size=total)
    idx = torch.bucketize(flat, edges, right=True, out_int32=small) - 1
    idx = torch.where(flat == edges[-1], torch.full_like(idx, nb - 1), idx)
    marked = torch.tensor(histograms, dtype=torch.bool).to(dev, non_blocking=True)
    valid = (idx >= 0) & (idx < nb) & torch.isfinite(flat) & marked[seg]
    key = torch.where(valid, seg * nb + idx, torch.full_like(idx, n * nb))  # n * nb: not counted
    counts = torch.bincount(key, minlength=n * nb + 1)[:n * nb].reshape(n, nb)
    rows = [i for i, h in enumerate(histograms) if h]
    if len(rows) < n:
        counts = counts[torch.tensor(rows, dtype=torch.int64).to(dev, non_blocking=True)]
    return counts.to(torch.float64)


def _median(t, absr):
    x = _flat(t).to(torch.float64)
    if absr:
        x = x.abs()
    n = x.numel()
    if n == 0:
        return torch.tensor(float("nan"), dtype=torch.float64, device=x.device)
    v = x.sort().values  # NaNs sort last: the nan count decides below
    return (v[(n - 1) // 2] + v[n // 2]) / 2


class _Batch:
    """Reductions of some tensors computed on their device, on their way to the host."""
    __slots__ = ("entries", "host", "event", "names", "medians", "n_hist")


class DeviceCapture:
    """The device paths of one smd.pytorch.Hook (see the module's doc)."""

    def __init__(self, hook_handle, memory_budget=None):
        self._h = hook_handle
        mode = os.environ.get("SMD_TORCH_DEVICE_CAPTURE", "auto")
        if mode not in ("auto", "always", "off"):
            raise ValueError(f"SMD_TORCH_DEVICE_CAPTURE must be auto, always or off, not {mode!r}")
        self.mode = mode
        self._budget = int(memory_budget) if memory_budget else 256 << 20
        self._backends = {}
        self._pools = {}
        self._edges = {}          # device -> smd's histogram bucket edges there (float64)
        self._pending = []        # (name, smd dtype, shape, tensor, reductions, histogram): not yet reduced
        self._batches = []        # _Batch: reduced on the device, values on their way
        self._copies = []         # (name, smd dtype, shape, slot, event, pool): raw values being copied
        self._unordered = []      # copy events the producing stream has not waited for yet
        self._deferring = 0       # inside batch(): reductions wait for its end
        self._callback_queued = False
        self._callback_task = None  # the graph task of the backward pass the callback waits for
        self.stats = {"reduction_batches": 0, "reduced_tensors": 0, "staged_tensors": 0}

    # -- choosing a path -----------------------------------------------------------------------
    def wants(self, tensor):
        if self.mode == "off":
            return False
        return self.mode == "always" or tensor.is_cuda

    def _backend(self, device):
        key = str(device)
        b = self._backends.get(key)
        if b is None:
            b = CudaBackend(device) if device.type == "cuda" else CpuBackend()
            self._backends[key] = b
            self._pools[key] = StagingPool(b, self._budget)
        return b, self._pools[key]

    def offer(self, name, tensor, smd_dtype, backward=False):
        """Takes a due tensor if it belongs on a device path; False: the caller saves it on the
        host path."""
        if smd_dtype is None or self.mode == "off" or (self.mode == "auto" and not tensor.is_cuda):
            return False  # (wants(), inline: this runs for every tensor of a due step)
        # SWIG appends the flags to the list of names: one list, the names then the two flags
        *reductions, value, histogram = _smd.smd_hook_due_reductions(self._h, name)
        if value or (histogram and tensor.dtype not in _REDUCIBLE):
            if tensor.is_complex() and tensor.dtype not in (torch.complex64, torch.complex128):
                return False
            self._stage(name, tensor, smd_dtype, immediate_order=not backward and not self._deferring)
            if backward:  # ordered before the optimizer when this backward pass ends
                self._queue_backward_end()
            return True
        if reductions and tensor.dtype not in _REDUCIBLE:
            return False
        # detach(), even of a gradient: a new tensor sharing its memory. Keeping the gradient
        # itself would raise its use count, and autograd would then copy it into .grad.
        self._pending.append((name, smd_dtype, list(tensor.shape), tensor.detach(), reductions,
                              histogram))
        if backward:
            self._queue_backward_end()
        elif not self._deferring:
            self.reduce_pending()
        return True

    # -- batching ------------------------------------------------------------------------------
    class _Deferred:
        def __init__(self, cap, order):
            self.cap = cap
            self.order = order

        def __enter__(self):
            self.cap._deferring += 1

        def __exit__(self, *exc):
            self.cap._deferring -= 1
            if not self.cap._deferring:
                self.cap.reduce_pending()
                if self.order:
                    self.cap._order_copies()
                # else the copies' order against the producer is set when the backward pass
                # ends (backward_started), so that the forward pass does not wait for them

    def batch(self, order=False):
        """Tensors offered inside ``with capture.batch():`` are reduced together at its end.
        order: the producing streams wait for the copies at its end; else a gradient hook must
        call backward_started in this step (the copies are ordered when that backward pass
        ends), or nothing may change the tensors in place before flush()."""
        return DeviceCapture._Deferred(self, order)

    def backward_started(self):
        """Called from a gradient hook: the copies and reductions of the step's parameters are
        ordered before the optimizer's update when this backward pass ends."""
        if self._unordered or self._pending:
            self._queue_backward_end()

    def _queue_backward_end(self):
        # Queued once a backward pass: the pass is told by autograd's graph task id, so that a
        # pass that raised (its callback never runs) does not keep the next one from queueing.
        task = _graph_task_id() if _graph_task_id is not None else None
        if self._callback_queued and task == self._callback_task:
            return
        engine = getattr(torch.autograd.Variable, "_execution_engine", None)
        try:
            engine.queue_callback(self._backward_end)
            self._callback_queued, self._callback_task = True, task
        except Exception:  # not inside a backward pass, or no such API: reduce and order now
            self._backward_end()

    def _backward_end(self):
        self._callback_queued = False
        self.reduce_pending()
        self._order_copies()

    def reduce_pending(self):
        """Launches the reductions of the pending tensors, batched by device (a fixed number of
        kernels per batch), and starts the copy of their results to the host."""
        pending, self._pending = self._pending, []
        groups = {}
        for e in pending:
            groups.setdefault(str(e[3].device), []).append(e)
        for entries in groups.values():
            chunk, size = [], 0
            for e in entries:
                k = e[3].numel()
                if chunk and size + k > BATCH_ELEMENTS:
                    self._reduce(chunk)
                    chunk, size = [], 0
                chunk.append(e)
                size += k
            if chunk:
                self._reduce(chunk)

    def _edges_on(self, device):
        key = str(device)
        e = self._edges.get(key)
        if e is None:
            e = torch.tensor(_smd.smd_histogram_bucket_edges(), dtype=torch.float64).to(device)
            self._edges[key] = e
        return e

    def _reduce(self, entries):
        b = _Batch()
        b.entries = entries
        with_values = [e for e in entries if e[4] or e[5]]
        wanted = set()
        medians = []
        hist = [bool(e[5]) for e in with_values]
        for e in with_values:
            wanted |= _needs(e[4])
            if e[5]:
                wanted |= _HISTOGRAM_STATS
            for r in e[4]:
                if r in ("median", "abs_median"):
                    medians.append((e[0], r, _median(e[3], r == "abs_median")))
        b.medians = {}
        b.n_hist = sum(hist)
        if with_values:
            dev = with_values[0][3].device
            stats, names, counts = batch_statistics([e[3] for e in with_values], wanted, hist,
                                                    self._edges_on(dev) if b.n_hist else None)
            parts = [stats.reshape(-1)]
            if medians:
                parts.append(torch.stack([m[2] for m in medians]))
            if counts is not None:
                parts.append(counts.reshape(-1))
            both = torch.cat(parts) if len(parts) > 1 else parts[0]
            backend, _ = self._backend(both.device)
            b.host, b.event = backend.scalars_to_host(both)
            b.names = names
            b.medians = {(m[0], m[1]): i for i, m in enumerate(medians)}
            self.stats["reduction_batches"] += 1
            self.stats["reduced_tensors"] += len(with_values)
        else:
            b.host, b.event, b.names = None, _Ready(), []
        self._batches.append(b)

    def _save_batches(self):
        batches, self._batches = self._batches, []
        for b in batches:
            b.event.synchronize()
            if b.host is None:  # nothing but shapes: no reductions, no histograms
                for name, dtype, shape, _, _, _ in b.entries:
                    _smd.smd_hook_save_reductions(self._h, name, dtype, shape, [], None, [])
                continue
            host = b.host.numpy()
            k = len(b.names)
            rows = [e for e in b.entries if e[4] or e[5]]
            n_rows = len(rows)
            table = host[:n_rows * k].reshape(n_rows, k)
            first_count = n_rows * k + len(b.medians)
            nb = (host.size - first_count) // b.n_hist if b.n_hist else 0
            # The reductions of every row at once (rows that ask for the same ones together: all
            # of them, as a rule), then one call per tensor with its ready-made list.
            given = {}
            groups = {}
            for i, e in enumerate(rows):
                groups.setdefault(tuple(e[4]), []).append(i)
            for reductions, idx in groups.items():
                if not reductions:
                    continue
                medians = {r: np.array([host[n_rows * k + b.medians[(rows[i][0], r)]] for i in idx])
                           for r in reductions if r in ("median", "abs_median")}
                sub = table if len(idx) == n_rows else table[idx]
                values = finish_rows(reductions, b.names, sub, [rows[i][3].numel() for i in idx],
                                     medians).tolist()
                labels = [(r[4:], True) if r.startswith("abs_") else (r, False) for r in reductions]
                for i, vs in zip(idx, values):
                    given[i] = [(op, absr, v) for (op, absr), v in zip(labels, vs)]
            row = hist_row = 0
            for name, dtype, shape, t, reductions, histogram in b.entries:
                h = None
                if reductions or histogram:
                    if histogram:
                        start = first_count + hist_row * nb
                        h = histogram_of(dict(zip(b.names, table[row].tolist())), host[start:start + nb])
                        hist_row += 1
                    g = given.get(row, [])
                    row += 1
                else:
                    g = []
                _smd.smd_hook_save_reductions(self._h, name, dtype, shape, g, h, [])

    # -- values --------------------------------------------------------------------------------
    def _stage(self, name, tensor, smd_dtype, immediate_order):
        src = _plain(tensor).detach()  # (detached even when no grad is needed: a new handle)
        if not src.is_contiguous():
            src = src.contiguous()
        if self._copies:
            self._hand_over(only_completed=True)
        backend, pool = self._backend(src.device)
        nbytes = src.numel() * src.element_size()
        slot = pool.acquire(nbytes, lambda: self._wait_for_release(pool))
        dst = slot.buf[:nbytes].view(src.dtype).view(src.shape)
        ev = backend.copy_to_host(dst, src)
        self._copies.append((name, smd_dtype, list(src.shape), slot, ev, nbytes, src.dtype))
        self.stats["staged_tensors"] += 1
        if immediate_order:
            backend.producer_waits([ev])
        else:
            self._unordered.append((backend, ev))

    def _order_copies(self):
        """The producing streams wait for the copies made so far (before the optimizer's next
        in-place update can run)."""
        unordered, self._unordered = self._unordered, []
        for backend, ev in unordered:
            backend.producer_waits([ev])

    def _hand_over(self, only_completed=False):
        """Gives completed copies to smd's writer (no copy: the writer releases the buffer), in
        the order they were made. only_completed: stops at the first copy still running (copies
        on one stream complete in order), so that staging a step's hundred tensors does not ask
        every earlier copy again each time."""
        copies, done = self._copies, 0
        try:
            for name, dtype, shape, slot, ev, nbytes, tdtype in copies:
                if only_completed and not ev.query():
                    break
                ev.synchronize()
                view = slot.buf[:nbytes].view(tdtype).view(shape)
                cap = view.__dlpack__()
                slot.pool.handed(slot)
                done += 1  # the call consumes the capsule whatever it returns
                _smd.smd_py_hook_adopt_dlpack_capsule(self._h, name, cap, slot.flag, [])
        finally:
            del copies[:done]

    def _wait_for_release(self, pool):
        self._hand_over()
        _smd.smd_hook_flush(self._h)
        deadline = time.monotonic() + 0.002
        while time.monotonic() < deadline:
            if pool._reclaim():
                return
            time.sleep(0.0002)

    # -- step end ------------------------------------------------------------------------------
    def flush(self):
        """Hands everything of the current step to smd: call before the step ends."""
        self._callback_queued = False  # a backward pass that queued one has ended by now
        if self._pending:
            self.reduce_pending()
        self._order_copies()
        if self._batches:
            self._save_batches()
        if self._copies:
            self._hand_over()

    def staging_bytes(self):
        return sum(p.allocated for p in self._pools.values())

    def pools(self):
        return dict(self._pools)
