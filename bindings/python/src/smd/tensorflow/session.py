"""smd.tensorflow.SessionHook: smdebug's SessionHook for tf.compat.v1 graph training
(``tf.compat.v1.train.MonitoredTrainingSession(hooks=[hook])`` or any SessionRunHook user).

Every session.run of the monitored session is one step. At before_run the hook asks for the
due losses and gradients as extra fetches of that same run; at after_run it saves them, and reads
the due variables (weights, biases, optimizer variables) with one more run, so that they are the
values after the step's update.
"""
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
        self._grads = []          # (name, gradient tensor) from the wrapped optimizer
        self._optimizer = None
        self._extra = {}          # name -> tensor added with add_to_collection
        self._fetchable = {}      # name -> tensor fetched in the same run (losses, gradients)
        self._variables = {}      # name -> variable read after the run
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
        for name, g in self._grads:
            if g.graph is graph:
                fetchable[name] = g
        for name, t in self._extra.items():
            if t.graph is graph:
                (variables if isinstance(t, tf.Variable) else fetchable)[name] = t
        self._fetchable, self._variables = fetchable, variables

    def before_run(self, run_context):
        self.begin_step()
        self._pending = None
        if not _smd.smd_hook_any_due(self._hook):
            return None
        due = {n: t for n, t in self._fetchable.items() if _smd.smd_hook_is_due(self._hook, n)}
        self._pending = due
        return _v1.train.SessionRunArgs(due) if due else None

    def after_run(self, run_context, run_values):
        if self._pending is None:
            return
        for name, value in (run_values.results or {}).items():
            self.save_tensor(name, np.asarray(value), [])
        due = {n: v for n, v in self._variables.items() if _smd.smd_hook_is_due(self._hook, n)}
        if due:
            values = run_context.session.run(due)
            for name, value in values.items():
                self.save_tensor(name, np.asarray(value), [])

    def end(self, session):
        self.flush()
