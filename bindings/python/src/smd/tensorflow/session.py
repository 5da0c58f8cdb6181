"""smd.tensorflow.SessionHook: smdebug's SessionHook for tf.compat.v1 graph training
(``tf.compat.v1.train.MonitoredTrainingSession(hooks=[hook])`` or any SessionRunHook user).

Every session.run of the monitored session is one step. At before_run the hook asks for the
due losses and gradients as extra fetches of that same run; at after_run it saves them, and reads
the due variables (weights, biases, optimizer variables) with one more run, so that they are the
values after the step's update. Any other tensor of the graph that a saved collection's pattern
names (``save_all``, ``include_regex``, ``collection.include(...)``) is fetched with the run as
well, as smdebug's hook does, unless it needs a placeholder the run does not feed.

The built-in collections follow smdebug's TensorFlow graph hook: weights, gradients and losses
are the graph's trainable variables, the wrapped optimizer's gradients and the graph's losses (no
name patterns); biases are the trainable variables and graph tensors whose name holds "bias".
"""
import collections
import functools

import numpy as np
import tensorflow as tf

import smd._framework as _fw
from smd import smdc as _smd
from smd.collection_keys import CollectionKeys
from smd.hook import Hook
from smd.tensorflow._common import (gradient_name, include_defaults, json_collections,
                                    set_wrapper, tf_options, wrapper_of)

_v1 = tf.compat.v1


class _Candidates:
    """The fetchable tensors, other graph tensors and variables of a SessionHook's graph that a
    collection the hook saves can hold (smd_hook_may_save), for one collections version."""
    __slots__ = ("version", "fetchable", "graph_tensors", "variables")

    def __init__(self, hook, version):
        may, h = _smd.smd_hook_may_save, hook._hook
        self.version = version
        self.fetchable = [(n, t) for n, t in hook._fetchable.items() if may(h, n, False)]
        self.graph_tensors = [(n, t) for n, t in hook._graph_tensors.items() if may(h, n, False)]
        self.variables = [(n, v) for n, v in hook._variables.items() if may(h, n, False)]


class SessionHook(_v1.train.SessionRunHook, Hook):
    """smdebug's SessionHook (seed 002 constructor arguments). Losses come from the graph's
    LOSSES collection (tf.compat.v1.losses.* add theirs) and from ``add_to_collection("losses",
    tensor)``; gradients from an optimizer passed through ``wrap_optimizer``; weights and biases
    are the graph's trainable variables."""

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *, _handle=None,
                 _json=None, **smd_options):
        if _handle is None:
            if out_dir is None:
                raise TypeError("SessionHook needs out_dir (or use SessionHook.create_from_json_file())")
            Hook.__init__(self, out_dir, export_tensorboard, tensorboard_dir, dry_run,
                          reduction_config, save_config, include_regex, include_collections,
                          save_all, include_workers, **smd_options)
        else:
            Hook.__init__(self, None, _handle=_handle)
        include_defaults(self._hook)
        for name in (CollectionKeys.WEIGHTS, CollectionKeys.GRADIENTS, CollectionKeys.LOSSES,
                     CollectionKeys.BIASES):
            Hook.get_collection(self, name).clear_include_regex()
        Hook.get_collection(self, CollectionKeys.BIASES).include("bias")
        self._grads = []          # (name, gradient tensor) from the wrapped optimizer
        self._optimizer = None
        self._extra = {}          # name -> tensor added with add_to_collection
        self._fetchable = {}      # name -> tensor fetched in the same run (losses, gradients)
        self._variables = {}      # name -> variable read after the run
        self._graph_tensors = {}  # name -> any other fetchable tensor of the graph
        self._placeholders = frozenset()
        self._needs_cache = {}    # (tensor name, unfed placeholders) -> whether it reads one
        self._candidates = None   # _Candidates: what a saved collection can hold, for a version
        self._pending = None
        _fw.hook_created(self)

    @classmethod
    def _framework_options(cls, options):
        tf_options(options)

    @classmethod
    def create_from_json_file(cls, json_file_path=None):
        options = _smd.smd_hook_options_create()
        cls._framework_options(options)
        handle = _smd.smd_hook_create_from_json_file(json_file_path, options)
        return cls(_handle=handle, _json=json_collections(json_file_path))

    def wrap_optimizer(self, optimizer):
        """Returns the same tf.compat.v1.train.Optimizer; the gradients it computes are saved
        (as "gradients/<variable>Grad")."""
        if not isinstance(optimizer, _v1.train.Optimizer):
            raise TypeError("SessionHook.wrap_optimizer takes a tf.compat.v1.train.Optimizer, not "
                            f"{type(optimizer).__name__}")
        if wrapper_of(optimizer) not in (None, self):
            raise ValueError("this optimizer is already wrapped by another smd hook")
        if wrapper_of(optimizer) is self:
            return optimizer
        original = optimizer.compute_gradients

        @functools.wraps(original)
        def compute_gradients(*args, **kwargs):
            pairs = original(*args, **kwargs)
            for g, v in pairs:
                if g is not None:
                    if isinstance(g, tf.IndexedSlices):
                        g = tf.convert_to_tensor(g)
                    self._grads.append((gradient_name(v), g))
            return pairs

        optimizer.compute_gradients = compute_gradients
        set_wrapper(optimizer, self)
        self._optimizer = optimizer
        return optimizer

    def add_to_collection(self, collection_name, tensor):
        """A graph tensor or variable saved in that collection (named by its graph name)."""
        if not hasattr(tensor, "name") or not hasattr(tensor, "graph"):
            raise TypeError(f"add_to_collection takes a graph tensor or variable, not {type(tensor).__name__}")
        Hook.get_collection(self, collection_name).add_tensor_name(tensor.name)
        self._extra[tensor.name] = tensor

    # -- SessionRunHook ------------------------------------------------------------------------
    def begin(self):
        graph = _v1.get_default_graph()
        fetchable, variables = {}, {}
        weights = Hook.get_collection(self, CollectionKeys.WEIGHTS)
        biases = Hook.get_collection(self, CollectionKeys.BIASES)
        for v in _v1.trainable_variables():
            (biases if "bias" in v.name else weights).add_tensor_name(v.name)
            variables[v.name] = v
        if self._optimizer is not None:
            opt_coll = Hook.get_collection(self, CollectionKeys.OPTIMIZER_VARIABLES)
            for v in self._optimizer.variables():
                opt_coll.add_tensor_name(v.name)
                variables[v.name] = v
        losses = Hook.get_collection(self, CollectionKeys.LOSSES)
        for t in graph.get_collection(_v1.GraphKeys.LOSSES):
            losses.add_tensor_name(t.name)
            fetchable[t.name] = t
        grads = Hook.get_collection(self, CollectionKeys.GRADIENTS)
        for name, g in self._grads:
            if g.graph is graph:
                grads.add_tensor_name(name)
                fetchable[name] = g
        for name, t in self._extra.items():
            if t.graph is graph:
                (variables if isinstance(t, tf.Variable) else fetchable)[name] = t
        # every other tensor a collection's pattern may name (smdebug's save_all saves them all);
        # variable handles (resource), variants and strings are not values to save
        others, placeholders = {}, set()
        for op in graph.get_operations():
            if op.type in ("Placeholder", "PlaceholderV2"):
                placeholders.add(op)
            if not graph.is_fetchable(op):
                continue
            for t in op.outputs:
                if t.dtype in (tf.resource, tf.variant, tf.string):
                    continue
                if t.name not in fetchable and t.name not in variables:
                    others[t.name] = t
        self._fetchable, self._variables = fetchable, variables
        self._graph_tensors, self._placeholders = others, frozenset(placeholders)
        self._needs_cache = {}
        self._candidates = None

    def before_run(self, run_context):
        self.begin_step()
        self._pending = None
        if not _smd.smd_hook_any_due(self._hook):
            return None
        h, is_due = self._hook, _smd.smd_hook_is_due
        # Of the graph's tensors and variables (thousands in a large graph), only those a saved
        # collection can hold are asked about at each due step: by default the losses alone.
        version = _smd.smd_hook_collections_version(h)
        if self._candidates is None or self._candidates.version != version:
            self._candidates = _Candidates(self, version)
        c = self._candidates
        due = {n: t for n, t in c.fetchable if is_due(h, n)}
        due.update((n, t) for n, t in c.graph_tensors if is_due(h, n))
        feeds = (run_context.original_args.feed_dict or {}) if run_context is not None else {}
        fed = {getattr(k, "name", k) for k in feeds}
        unfed = frozenset(p for p in self._placeholders if p.outputs[0].name not in fed)
        if unfed:  # what needs a placeholder this run does not feed cannot be fetched with it
            due = {n: t for n, t in due.items() if not self._reads(t, unfed)}
        self._pending = due
        return _v1.train.SessionRunArgs(due) if due else None

    def _reads(self, tensor, placeholders):
        """Whether computing the tensor runs one of the placeholder ops (through its inputs or
        control dependencies)."""
        key = (tensor.name, placeholders)
        found = self._needs_cache.get(key)
        if found is None:
            found = False
            seen, queue = {tensor.op}, collections.deque([tensor.op])
            while queue and not found:
                op = queue.popleft()
                found = op in placeholders
                for o in [i.op for i in op.inputs] + list(op.control_inputs):
                    if o not in seen:
                        seen.add(o)
                        queue.append(o)
            self._needs_cache[key] = found
        return found

    def after_run(self, run_context, run_values):
        if self._pending is None:
            return
        for name, value in (run_values.results or {}).items():
            self.save_tensor(name, np.asarray(value), [])
        h, is_due = self._hook, _smd.smd_hook_is_due
        due = {n: v for n, v in self._candidates.variables if is_due(h, n)}
        if due:
            values = run_context.session.run(due)
            for name, value in values.items():
                self.save_tensor(name, np.asarray(value), [])

    def end(self, session):
        self.flush()
