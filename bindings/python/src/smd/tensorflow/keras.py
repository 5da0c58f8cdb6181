"""smd.tensorflow.KerasHook: smdebug's Keras hook as a Keras callback (Keras 3 and Keras 2).

Steps: every train, test and predict batch is one step (its mode is TRAIN, EVAL or PREDICT);
the step starts at on_*_batch_begin and what the batch produced is saved at on_*_batch_end:
losses and metrics from Keras' logs, weights and biases after the batch's update, optimizer
variables, and the custom tensors of collections. Values that only exist inside the compiled
train step (gradients, layer inputs/outputs, model inputs, labels and predictions) are handed out
of it by a tf.numpy_function that runs only when one of them is due at that step (a tf.cond on a
flag the hook sets at batch begin): steps that save nothing pay one cond per captured point. A
step compiled by XLA (``jit_compile=True``, Keras 3's default on a GPU) cannot run Python: there
the same cond assigns the tensors to variables of the hook, which it reads at the batch's end.
Gradients, weights and optimizer variables whose collections want only reductions at a step are
reduced by TensorFlow where they live and only the numbers leave the device
(smd/tensorflow/_reduce.py).
"""
import functools
import inspect
import re
import types
import warnings
import weakref

import numpy as np
import tensorflow as tf

import smd._framework as _fw
from smd import smdc as _smd
from smd.collection_keys import CollectionKeys
from smd.hook import Collection, Hook
from smd.modes import ModeKeys
from smd.tensorflow import _reduce
from smd.tensorflow._common import (LAYERS, gradient_name, include_defaults, is_keras3_object,
                                    json_collections, set_wrapper, tf_options, to_numpy,
                                    variable_name, wrapper_of)

try:  # TensorFlow's SavedModel export (model.save in the "tf" format, tf.saved_model.save)
    from tensorflow.python.saved_model.save_context import in_save_context as _exporting
except ImportError:  # pragma: no cover - every TensorFlow 2 has it
    def _exporting():
        return False

_Callback = tf.keras.callbacks.Callback
_GRADS, _LAYERS, _IO, _GRAD_REDUCTIONS = 0, 1, 2, 3
# Built-in collections whose members the hook decides ("all" holds every name, so it is not one).
_BUILT_IN = frozenset(v for k, v in vars(CollectionKeys).items()
                      if k.isupper() and v != CollectionKeys.ALL)
_SKIPPED_LOG_KEYS = {"outputs", "batch", "size"}  # "batch": saved from the callback's argument


class KerasCollection(Collection):
    """A collection of a KerasHook: smd.Collection plus smdebug's add_keras_layer and add."""

    def __init__(self, handle, hook, state=None):
        super().__init__(handle, _state=state)
        self._keras_hook = weakref.ref(hook)

    def add_keras_layer(self, layer, inputs=False, outputs=True):
        """Saves the layer's outputs (and inputs with inputs=True) in this collection, as
        "<layer>/outputs" and "<layer>/inputs" ("_<i>" appended for several tensors)."""
        if not (hasattr(layer, "name") and callable(getattr(layer, "call", None))):
            raise TypeError(f"add_keras_layer takes a Keras layer, not {type(layer).__name__}")
        name = re.escape(layer.name)
        if inputs:
            self.include(f"^{name}/inputs(_\\d+)?$")
        if outputs:
            self.include(f"^{name}/outputs(_\\d+)?$")
        self._keras_hook()._watch_layer(layer)

    def add(self, variable):
        """Saves a tf.Variable (or Keras variable) in this collection at every due batch end."""
        self._keras_hook()._add_variable(self.name, variable)


class KerasHook(_Callback, Hook):
    """smdebug's KerasHook: ``model.fit(..., callbacks=[hook])`` (also evaluate and predict).

    Constructor arguments are smdebug's (seed 002). As in smdebug, the losses, metrics and
    sm_metrics collections are always saved; weights, biases, gradients, optimizer_variables,
    inputs, outputs and layers when include_collections names them (or save_all); an included
    collection of the script's own saves whatever its patterns name. Gradients come
    from the model's optimizer, which the hook wraps itself when the model is set (calling
    ``wrap_optimizer`` yourself, as smdebug asks, works too).
    """

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *, _handle=None,
                 _json=None, **smd_options):
        _Callback.__init__(self)
        if _handle is None:
            if out_dir is None:
                raise TypeError("KerasHook needs out_dir (or use KerasHook.create_from_json_file())")
            Hook.__init__(self, out_dir, export_tensorboard, tensorboard_dir, dry_run,
                          reduction_config, save_config, include_regex, include_collections,
                          save_all, include_workers, **smd_options)
            wanted, any_regex = list(include_collections or []), bool(include_regex)
        else:
            Hook.__init__(self, None, _handle=_handle)
            wanted, save_all, any_regex = _json
        include_defaults(self._hook)
        self._wanted = set(wanted)
        self._save_all = bool(save_all)
        self._any_regex = any_regex
        self.get_collection(LAYERS).include(r"^[^/]+/(inputs|outputs)(_\d+)?$")
        self.get_collection(CollectionKeys.OUTPUTS).include(r"^(labels|predictions)(_\d+)?$")
        self.get_collection(CollectionKeys.INPUTS).include(r"^inputs(_\d+)?$")
        self._colls = {n: self.get_collection(n) for n in
                       (CollectionKeys.WEIGHTS, CollectionKeys.BIASES, CollectionKeys.OPTIMIZER_VARIABLES)}
        self._flags = None             # tf.Variable([grads, layers, io, grad reductions]) read in the step
        self._grad_stats = None        # _GradStats: the gradients' statistics the train step computes
        self._grad_reduced_now = False  # this step's gradient reductions are computed in the step
        self._in_step_due = {}         # name -> _reduced_in_step's answer, for the current batch
        self._flag_values = None
        self._grad_names = None        # names of the gradients the optimizer produced
        self._layer_names = []         # layers whose call is captured
        self._watched = {}             # id(layer) -> layer
        self._patched = {}             # id -> layer or model whose call/compute_loss is wrapped
        self._registered = set()       # variable names added to weights/biases/optimizer_variables
        self._custom = {}              # name -> variable (collection.add / add_to_collection)
        self._optimizer = None
        self._model_ref = None
        self._xla = False
        self._xla_groups = {}          # _Slots of what a step compiled by XLA assigns to variables
        self._xla_unsaved = set()      # names XLA cannot hand out (shape unknown when compiled)
        self._composite_skipped = set()  # names of sparse or ragged tensors (not saved), warned of
        self._traced = weakref.WeakKeyDictionary()  # traced graph -> names captured in it
        self._xla_grad_values = False  # a step compiled by XLA hands gradient values out
        self._serial = None            # tf.Variable: the number of the due batch, read in the step
        self._serial_value = 0
        self._inner_steps = 1          # the model's steps_per_execution: train steps per batch call
        self._held = {}                # name -> value a step handed out, saved at the batch's end
        self._in_batch = None
        self._saved_now = set()        # names saved in this step outside the compiled function
        self._current_mode = None
        self._in_tape_step = False     # a wrapped tape began the current step
        _fw.hook_created(self)

    @classmethod
    def _framework_options(cls, options):
        tf_options(options)

    @classmethod
    def create_from_json_file(cls, json_file_path=None):
        """The hook of smdebug's JSON hook configuration (None: $SMDEBUG_CONFIG_FILE_PATH, else
        /opt/ml/input/config/debughookconfig.json), as SageMaker starts it."""
        options = _smd.smd_hook_options_create()
        cls._framework_options(options)
        handle = _smd.smd_hook_create_from_json_file(json_file_path, options)
        return cls(_handle=handle, _json=json_collections(json_file_path))

    # -- collections ---------------------------------------------------------------------------
    def get_collection(self, name, create=True):
        base = Hook.get_collection(self, name, create)
        return KerasCollection(base._c, self, base._state)

    def add_to_collection(self, collection_name, variable):
        """smdebug's add_to_collection: a variable saved in that collection."""
        self._add_variable(collection_name, variable)

    def _add_variable(self, collection_name, variable):
        if not (hasattr(variable, "numpy") and hasattr(variable, "name")):
            raise TypeError(f"collection {collection_name!r}: add takes a tf.Variable or Keras "
                            f"variable, not {type(variable).__name__}")
        name = variable_name(variable)
        Hook.get_collection(self, collection_name).add_tensor_name(name)
        self._custom[name] = variable

    def _wants(self, *names):
        """Whether a collection the hook saves may hold these collections' tensors: they are
        included, or everything is saved, or a regex may name them (the hook's include_regex, or a
        collection not built in, whose patterns the script may add after the hook is made)."""
        return (self._save_all or self._any_regex or any(n in self._wanted for n in names)
                or any(n not in _BUILT_IN for n in self._wanted))

    # -- wiring into the model -----------------------------------------------------------------
    def set_model(self, model):
        super().set_model(model)
        opt = getattr(model, "optimizer", None)
        if opt is not None and wrapper_of(opt) is None:
            self.wrap_optimizer(opt)  # also a new optimizer of a recompiled model
        elif opt is not None and wrapper_of(opt) is not self:
            warnings.warn("KerasHook: the model's optimizer is wrapped by another smd hook, so this "
                          "hook does not see its gradients; use one hook per model",
                          RuntimeWarning, stacklevel=2)
        # read at every fit: a model compiled again is the same object. Keras 3 resolves
        # jit_compile="auto" here: XLA when the machine has a GPU
        self._xla = getattr(model, "jit_compile", False) is True
        self._inner_steps = _steps_per_execution(model)
        if self._model_ref is not None and self._model_ref() is model:
            return
        self._model_ref = weakref.ref(model)
        if self._wants(LAYERS):
            for layer in getattr(model, "layers", []):
                self._watch_layer(layer)
        for layer in list(self._watched.values()):
            self._patch_layer(layer)
        if self._wants(CollectionKeys.INPUTS, CollectionKeys.OUTPUTS):
            self._patch_compute_loss(model)
        self._patch_step_functions(model)
        if tf.executing_eagerly():
            self._ensure_flags()

    def register_model(self, model):
        """smdebug's register_model: hooks the model's layers (and its optimizer, once compiled)
        before ``fit``, as ``fit`` does when it hands the model to the hook."""
        if not (hasattr(model, "layers") and callable(getattr(model, "call", None))):
            raise TypeError(f"register_model takes a Keras model, not {type(model).__name__}")
        self.set_model(model)

    def wrap_optimizer(self, optimizer):
        """smdebug's wrap_optimizer: returns the same optimizer, whose gradients the hook now
        sees (saved in the "gradients" collection as "gradients/<variable>Grad")."""
        owner = wrapper_of(optimizer)
        if owner is self:
            return optimizer
        if owner is not None:
            raise ValueError("this optimizer is already wrapped by another smd hook: use one hook "
                             "per training")
        if is_keras3_object(optimizer) and callable(getattr(optimizer, "apply", None)):
            original = optimizer.apply

            @functools.wraps(original)
            def apply(grads, trainable_variables=None, *args, **kwargs):
                variables = trainable_variables
                if variables is None:
                    variables = getattr(optimizer, "_trainable_variables", None) or []
                self._capture_gradients(_unscaled(optimizer, list(grads), list(variables)),
                                        list(variables))
                result = original(grads, trainable_variables, *args, **kwargs)
                self._after_apply()
                return result

            optimizer.apply = apply
        elif callable(getattr(optimizer, "apply_gradients", None)):
            original = optimizer.apply_gradients

            @functools.wraps(original)
            def apply_gradients(grads_and_vars, *args, **kwargs):
                pairs = list(grads_and_vars)
                self._capture_gradients([g for g, _ in pairs], [v for _, v in pairs])
                result = original(pairs, *args, **kwargs)
                self._after_apply()
                return result

            optimizer.apply_gradients = apply_gradients
        else:
            raise TypeError(f"wrap_optimizer takes a Keras optimizer, not {type(optimizer).__name__}")
        set_wrapper(optimizer, self)
        self._optimizer = optimizer
        return optimizer

    def _after_apply(self):
        # A custom loop (wrap_tape + wrap_optimizer, eager): the optimizer variables of the step,
        # after its update. Inside model.fit's compiled step the batch end saves them.
        if tf.executing_eagerly() and self._in_tape_step and _smd.smd_hook_any_due(self._hook):
            self._save_optimizer_variables()

    def wrap_tape(self, tape):
        """smdebug's wrap_tape for custom GradientTape loops (eager): entering the tape starts a
        step; tape.gradient() saves the gradients, the variables (weights and biases, values at
        that point) and the loss. Use the returned object in place of the tape."""
        if not isinstance(tape, tf.GradientTape):
            raise TypeError(f"wrap_tape takes a tf.GradientTape, not {type(tape).__name__}")
        return _WrappedTape(self, tape)

    def _watch_layer(self, layer):
        if id(layer) not in self._watched:
            self._watched[id(layer)] = layer
            if self._model_ref is not None:
                self._patch_layer(layer)

    def _patch_layer(self, layer):
        if id(layer) in self._patched:
            return
        original = layer.call
        name = layer.name

        def capture(*args, **kwargs):
            outputs = original(*args, **kwargs)
            if args and not _symbolic(args[0]):
                self._capture(_LAYERS, [(f"{name}/inputs", args[0]), (f"{name}/outputs", outputs)])
            return outputs

        function = getattr(original, "__func__", None)
        if function is None:
            layer.call = functools.wraps(original)(capture)
        else:
            # a bound method again, as Keras expects: Keras 2's SavedModel export (model.save in
            # the "tf" format) describes call by the layer's argument spec, which starts with
            # self, and skips that argument only for methods
            @functools.wraps(function)
            def call(layer_self, *args, **kwargs):
                return capture(*args, **kwargs)

            layer.call = types.MethodType(call, layer)
        self._patched[id(layer)] = layer
        if name not in self._layer_names:  # (a model built again after clear_session: the same names)
            self._layer_names.append(name)

    def _patch_step_functions(self, model):
        """The model's train, test and predict functions, as its make_*_function methods make
        them, are wrapped: one run while the hook is not in a batch of its own mode (a callback's
        model.predict inside a training batch, train_on_batch after fit) runs with the capture
        flags off, so that its tensors neither land in the hook's batch nor cost a capture."""
        for attr, mode in (("train_function", ModeKeys.TRAIN), ("test_function", ModeKeys.EVAL),
                           ("predict_function", ModeKeys.PREDICT)):
            make = getattr(model, "make_" + attr, None)
            if make is None or getattr(make, "_smd_hook", None) is self:
                continue

            def patched(*args, _make=make, _attr=attr, _mode=mode, **kwargs):
                made = _make(*args, **kwargs)  # Keras 3 keeps it in the attribute (and may
                fn = getattr(model, _attr, None) if made is None else made  # return None)
                if callable(fn) and not self._guards(fn):
                    fn = self._guarded(fn, _mode)
                    setattr(model, _attr, fn)
                return fn if made is not None else made
            patched._smd_hook = self
            setattr(model, "make_" + attr, patched)

    def _guards(self, fn):
        """Whether one of this hook's guards is in fn's chain of guards (another hook that hooked
        the same model wraps it too: each wraps once, not again at every make_*_function)."""
        while fn is not None:
            if getattr(fn, "_smd_hook", None) is self:
                return True
            fn = getattr(fn, "_smd_inner", None)
        return False

    def _guarded(self, fn, mode):
        def run(*args, **kwargs):
            values = self._flag_values
            if values is None or not any(values) or self._in_batch is mode or self._flags is None:
                return fn(*args, **kwargs)
            self._flags.assign([False, False, False, False])
            try:
                return fn(*args, **kwargs)
            finally:
                self._flags.assign(list(values))
        run._smd_hook = self
        run._smd_inner = fn
        return run

    def _patch_compute_loss(self, model):
        original = getattr(model, "compute_loss", None)
        if original is None or id(model) in self._patched:
            return
        signature = inspect.signature(original)

        @functools.wraps(original)
        def compute_loss(*args, **kwargs):
            try:
                bound = signature.bind_partial(*args, **kwargs).arguments
            except TypeError:
                bound = {}
            pairs = [("inputs", bound.get("x")), ("labels", bound.get("y")),
                     ("predictions", bound.get("y_pred"))]
            self._capture(_IO, [(n, v) for n, v in pairs if v is not None and not _symbolic(v)])
            return original(*args, **kwargs)

        model.compute_loss = compute_loss
        self._patched[id(model)] = model

    # -- capture -------------------------------------------------------------------------------
    def _ensure_flags(self):
        if self._flags is None:
            with tf.init_scope():
                self._flags = tf.Variable([False, False, False, False], trainable=False, dtype=tf.bool,
                                          name="smd_hook_due")
            self._flag_values = (False, False, False, False)
        if self._serial is None:
            with tf.init_scope():
                self._serial = tf.Variable(0, trainable=False, dtype=tf.int64, name="smd_hook_serial")

    def _capture_gradients(self, grads, variables):
        pairs = [(gradient_name(v), g) for g, v in zip(grads, variables) if g is not None]
        self._grad_names = [n for n, _ in pairs]
        self._capture(_GRADS, pairs)

    def _capture(self, which, named):
        """Saves (name, tensor or nested tensors) pairs now (eager) or, inside a traced function,
        through a numpy_function run when flag `which` is set."""
        if _exporting():
            return  # a SavedModel traces the model's calls: nothing of the hook goes into it
        if _replica_index() > 0:
            return  # a tf.distribute strategy's other replicas: replica 0's tensors are saved
        names, tensors = [], []
        for name, value in named:
            flat = tf.nest.flatten(value)
            if len(flat) == 1:
                names.append(name)
                tensors.append(flat[0])
            else:
                names.extend(f"{name}_{i}" for i in range(len(flat)))
                tensors.extend(flat)
        keep = []
        for n, t in zip(names, tensors):
            if t is None or getattr(t, "dtype", None) == tf.string:
                continue
            if isinstance(t, (tf.SparseTensor, tf.RaggedTensor)):
                # a sparse or ragged input has no dense value to hand out as it is
                if n not in self._composite_skipped:
                    self._composite_skipped.add(n)
                    warnings.warn(f"KerasHook: {n} is a {type(t).__name__}, which the hook does not "
                                  "save", RuntimeWarning, stacklevel=3)
                continue
            keep.append((n, t))
        if not keep:
            return
        names = [n for n, _ in keep]
        # Sparse gradients (IndexedSlices: an Embedding's) stay sparse until a branch that saves
        # them: made dense where the step runs, each step, one would cost the embedding's size.
        tensors = [t if isinstance(t, tf.IndexedSlices) else tf.convert_to_tensor(t) for _, t in keep]
        if tf.executing_eagerly():
            if self._in_batch is None and not self._in_tape_step:
                return  # the model called outside the hook's batches (a predict without the hook)
            due = [(n, _dense(t)) for n, t in zip(names, tensors) if _smd.smd_hook_is_due(self._hook, n)]
            if self._inner_steps > 1 and self._in_batch is not None:
                self._held.update(due)  # the last inner step's, at the batch's end
            else:
                self._save_values(due)
            return
        # A layer called more than once in a step (shared between inputs): the first call's
        # tensors, in a traced step as eagerly (where _saved_now keeps the first)
        seen = self._traced.setdefault(tf.compat.v1.get_default_graph(), set())
        fresh = [i for i, n in enumerate(names) if n not in seen]
        if len(fresh) < len(names):
            names, tensors = [names[i] for i in fresh], [tensors[i] for i in fresh]
            if not names:
                return
        seen.update(names)
        self._ensure_flags()
        flags = self._flags
        reduced = set()
        if which == _GRADS and _reduce.enabled():
            reduced = self._reduce_gradients_in_step(names, tensors, flags)
        if self._xla:
            self._capture_in_variables(which, names, tensors, flags)
            return

        def save(*arrays):
            if self._in_batch is None:
                # the same function run outside the hook's batches (the model called on its own
                # after a due step): not part of the step
                return np.int32(0)
            for n, a in zip(names, arrays):
                if n in reduced and self._grad_reduced_now and self._reduced_in_step(n) is not None:
                    continue  # its reductions were computed in the step
                if not _smd.smd_hook_is_due(self._hook, n):
                    continue
                if self._inner_steps > 1:
                    # several train steps run in one call and one hook step (steps_per_execution):
                    # the last one's value is saved, once, at the batch's end (as XLA's variables)
                    self._held[n] = np.array(a, copy=True)
                else:
                    self.save_tensor(n, a, [])
            return np.int32(0)

        tf.cond(flags[which],
                lambda: tf.numpy_function(save, [_dense(t) for t in tensors], tf.int32, stateful=True),
                lambda: tf.constant(0, tf.int32))

    def _retrace_for_gradient_values(self):
        """A gradient's value is due for the first time in a step compiled by XLA whose gradients
        leave it only as statistics: Keras is made to trace its train step again before this
        batch runs it (its fit loop looks the train function up at every batch), and that trace
        gives the gradients variables."""
        self._xla_grad_values = True
        make = getattr(self.model, "make_train_function", None) if self.model is not None else None
        if make is None:
            warnings.warn("KerasHook: the gradients' values are due but the step compiled by XLA "
                          "hands out only their statistics, and the model cannot trace its train "
                          "step again: they are not saved", RuntimeWarning, stacklevel=3)
            return
        make(force=True)

    def _capture_in_variables(self, which, names, tensors, flags):
        """XLA's form of the capture (a compiled step cannot run a numpy_function): on a step whose
        flag `which` is set, the step assigns the tensors to variables of the hook and stamps them
        with the batch's number; the batch's end saves those stamped with the current one. Only
        tensors that a saved collection may hold get a variable (each costs its tensor's memory on
        the device), and only those of a shape known when the step is compiled (XLA cannot change
        a variable's shape): the others are not saved, with a warning."""
        if which == _GRADS and not self._xla_grad_values:
            # Gradients get variables (one more copy of them on the device) only once one of
            # their values is due: while the step's statistics serve every gradient due, none.
            # A later batch that needs a value has the step traced again (_update_flags).
            self._xla_grad_values = any(_smd.smd_hook_is_due(self._hook, n)
                                        and self._reduced_in_step(n) is None for n in names)
            if not self._xla_grad_values:
                return
        keep, unknown = [], []
        for n, t in zip(names, tensors):
            if not _smd.smd_hook_may_save(self._hook, n, False):
                continue
            (keep if t.shape.is_fully_defined() else unknown).append((n, t))
        new = [n for n, _ in unknown if n not in self._xla_unsaved]
        if new:
            self._xla_unsaved.update(new)
            warnings.warn("KerasHook: the model's steps are compiled by XLA (jit_compile=True, Keras 3's "
                          "default on a GPU), which cannot hand out a tensor whose shape is not "
                          "known when the step is compiled: " + ", ".join(new) + " not saved (a "
                          "dataset batched with drop_remainder=True gives static shapes; "
                          "compile(..., jit_compile=False) saves them all)", RuntimeWarning,
                          stacklevel=2)
        if not keep:
            return
        # the same variables for the same tensors: tf.function traces a step that creates
        # variables twice, and a test step may capture what the train step does
        key = (which, tuple((n, tuple(t.shape), t.dtype) for n, t in keep))
        slots = self._xla_groups.get(key)
        if slots is None:
            with tf.init_scope():
                slots = _Slots(which, [n for n, _ in keep],
                               [tf.Variable(tf.zeros(t.shape, t.dtype), trainable=False,
                                            name="smd_captured") for _, t in keep],
                               tf.Variable(-1, trainable=False, dtype=tf.int64, name="smd_captured_batch"))
            self._xla_groups[key] = slots
        serial = self._serial

        def assign():
            ops = [v.assign(_dense(t)) for v, (_, t) in zip(slots.variables, keep)]
            with tf.control_dependencies(ops):
                with tf.control_dependencies([slots.stamp.assign(serial)]):
                    return tf.constant(0, tf.int32)
        tf.cond(flags[which], assign, lambda: tf.constant(0, tf.int32))

    def _save_captured_variables(self):
        """At the batch's end: what a step compiled by XLA assigned to the hook's variables in this
        batch (stamped with its number; another function's or an earlier batch's are not)."""
        groups = [g for g in self._xla_groups.values() if self._flag_values[g.which]]
        if not groups:
            return
        stamps = tf.stack([g.stamp for g in groups]).numpy()
        pairs = []
        for g, stamp in zip(groups, stamps):
            if stamp != self._serial_value:
                continue
            for n, v in zip(g.names, g.variables):
                if self._grad_reduced_now and self._reduced_in_step(n) is not None:
                    continue  # its reductions were computed in the step
                pairs.append((n, v))
        self._save_values(pairs)

    def _reduce_gradients_in_step(self, names, tensors, flags):
        """Inside the train step: on a step whose flag says so, the statistics (and histogram
        bucket counts) of every floating gradient of static shape, in float64 matrix variables
        read at the batch's end."""
        keep = [i for i, t in enumerate(tensors)
                if t.dtype in _reduce.REDUCIBLE and t.shape.is_fully_defined()]
        if not keep:
            return set()
        key = tuple(names[i] for i in keep)
        signature = tuple((names[i], tuple(tensors[i].shape), tensors[i].dtype) for i in keep)
        if self._grad_stats is None or self._grad_stats.signature != signature:
            # (names alone are not enough: a hook reused for another model with the same layer
            # names would keep the first model's shapes for the means and the records)
            # The statistics the reductions due now need (the step is traced at its first batch,
            # due as a rule), all of them when none is: computing the twelve costs several times
            # what max, mean and l2 cost; bucket counts only when a histogram is due now. A later
            # step that needs more takes the value path for those gradients.
            want, histograms = set(), False
            for n in key:
                due = _reduce.due_on_device(self._hook, n)
                if due is not None:
                    want |= due.stats()
                    histograms |= due.histogram
            columns = [c for c in _reduce.STATS if c in want] if want else list(_reduce.STATS)
            with tf.init_scope():
                var = tf.Variable(tf.zeros([len(keep), len(columns)], tf.float64),
                                  trainable=False, name="smd_gradient_statistics")
                counts = None
                if histograms:
                    nb = int(_reduce.bucket_edges().shape[0]) - 1
                    counts = tf.Variable(tf.zeros([len(keep), nb], tf.float64), trainable=False,
                                         name="smd_gradient_bucket_counts")
                stamp = tf.Variable(-1, trainable=False, dtype=tf.int64,
                                    name="smd_gradient_statistics_batch")
            self._in_step_due.clear()
            self._grad_stats = _GradStats(signature, var, columns, counts, stamp)
        var, columns = self._grad_stats.variable, self._grad_stats.columns
        counts, stamp, serial = self._grad_stats.counts, self._grad_stats.stamp, self._serial
        chosen = [tensors[i] for i in keep]

        def reduce():
            dense = [_dense(t) for t in chosen]
            matrix, _ = _reduce.statistics(dense, columns)
            ops = [var.assign(matrix), stamp.assign(serial)]
            if counts is not None:
                ops.append(counts.assign(_reduce.bucket_counts(dense)))
            with tf.control_dependencies(ops):
                return tf.constant(0, tf.int32)
        tf.cond(flags[_GRAD_REDUCTIONS], reduce, lambda: tf.constant(0, tf.int32))
        return set(key)

    def _reduced_in_step(self, name):
        """What `name` needs at this step (a _reduce.Due) when it is all reductions and histograms
        that the train step's statistics and bucket counts can give, else None."""
        g = self._grad_stats
        if g is None or name not in g.name_set:
            return None
        # asked at batch begin, in the step and at batch end: one C call a name and batch
        if name not in self._in_step_due:
            due = _reduce.due_on_device(self._hook, name)
            served = due is not None and due.stats() <= g.column_set
            if not served or (due.histogram and g.counts is None):
                due = None
            self._in_step_due[name] = due
        return self._in_step_due[name]

    def _save_gradient_statistics(self):
        """At the batch's end: the reductions and histograms the train step computed."""
        g = self._grad_stats
        if int(g.stamp.numpy()) != self._serial_value:
            return  # not computed in this batch (a step run eagerly, another function)
        matrix = g.variable.numpy()
        counts = g.counts.numpy() if g.counts is not None else None
        for i, name in enumerate(g.names):
            due = self._reduced_in_step(name)
            if due is not None and name not in self._saved_now:
                self._saved_now.add(name)
                _reduce.save_shaped(self._hook, name, g.dtypes[i], g.shapes[i], due, matrix[i],
                                    g.columns, counts[i] if due.histogram else None)

    def _save_values(self, pairs):
        """Saves the (name, tensor or variable) pairs that are due and not yet saved in this step:
        those whose reductions and histograms TensorFlow can compute where they live are reduced
        together (_reduce.save_on_device: one call of a compiled function for all of them), the
        others copied to the host whole."""
        on_device = []
        for name, value in pairs:
            if name in self._saved_now or not _smd.smd_hook_is_due(self._hook, name):
                continue
            self._saved_now.add(name)
            item = _reduce.on_device(self._hook, name, value)
            if item is None:
                self.save_tensor(name, to_numpy(value), [])
            else:
                on_device.append(item)
        if on_device:
            _reduce.save_on_device(self._hook, on_device)

    # -- steps ---------------------------------------------------------------------------------
    def _begin(self, mode):
        if self._in_batch is not None:
            raise RuntimeError(
                "KerasHook: a batch began before the previous one ended: the same hook is registered "
                "twice (in callbacks, or in two models training at once); use one hook per model")
        self._in_batch = mode
        self._in_tape_step = False
        if mode is not self._current_mode:
            self.set_mode(mode)
            self._current_mode = mode
        self.begin_step()
        self._saved_now.clear()
        self._held.clear()
        self._in_step_due.clear()
        self._update_flags(mode)

    def _update_flags(self, mode):
        if self._flags is None and not self._watched and self._optimizer is None:
            return
        h = self._hook
        due = _smd.smd_hook_any_due(h)
        grads = layers = io = grad_reductions = False
        if due:
            if mode is ModeKeys.TRAIN:
                if self._grad_names is None:
                    # the train step is traced in this batch: the statistics it computes, and
                    # the values of the gradients they do not serve
                    grads, grad_reductions = True, _reduce.enabled()
                else:
                    in_step = _reduce.enabled()
                    for n in self._grad_names:
                        if not _smd.smd_hook_is_due(h, n):
                            continue
                        if in_step and self._reduced_in_step(n) is not None:
                            grad_reductions = True
                        else:
                            grads = True
                    if grads and self._xla and not self._xla_grad_values:
                        self._retrace_for_gradient_values()
            layers = any(_smd.smd_hook_is_due(h, f"{n}/outputs") or _smd.smd_hook_is_due(h, f"{n}/inputs")
                         for n in self._layer_names)
            io = any(_smd.smd_hook_is_due(h, n) for n in ("labels", "predictions", "inputs"))
        self._grad_reduced_now = grad_reductions
        values = (grads, layers, io, grad_reductions)
        if (self._xla_groups or self._grad_stats is not None) and any(values):
            # the number the step stamps its captured variables and statistics with
            self._serial_value += 1
            self._serial.assign(self._serial_value)
        if values != self._flag_values:
            self._ensure_flags()
            self._flags.assign(list(values))
            self._flag_values = values

    def _register_variables(self):
        model = self.model
        for v in getattr(model, "weights", []) if model is not None else []:
            name = variable_name(v)
            if name not in self._registered:
                self._registered.add(name)
                coll = CollectionKeys.BIASES if "bias" in name else CollectionKeys.WEIGHTS
                self._colls[coll].add_tensor_name(name)
        self._register_optimizer_variables(self._optimizer_variables())

    def _register_optimizer_variables(self, variables):
        for v in variables:
            name = variable_name(v)
            if name not in self._registered:
                self._registered.add(name)
                self._colls[CollectionKeys.OPTIMIZER_VARIABLES].add_tensor_name(name)

    def _optimizer_variables(self):
        """The optimizer's own variables, as smdebug's optimizer_variables: its iteration count,
        learning rate and hyperparameters (Adam: iter, learning_rate, beta_1, beta_2, decay), not
        the state it keeps per weight (slots: momentums, velocities)."""
        model = self.model
        opt = self._optimizer or (getattr(model, "optimizer", None) if model is not None else None)
        hyper = getattr(opt, "_hyper", None)
        if isinstance(hyper, dict):
            # Keras 2's OptimizerV2: its iterations and the hyperparameters it made variables of
            # (add_weight, which smdebug intercepts); variables() lists only iterations and slots
            own = [opt.iterations] if getattr(opt, "iterations", None) is not None else []
            own += [v for _, v in sorted(hyper.items()) if isinstance(v, tf.Variable)]
            return own
        variables = getattr(opt, "variables", None) if opt is not None else None
        if callable(variables):  # a method in Keras 2's optimizers, a property in Keras 3's
            variables = variables()
        # Keras 3 and TF 2.11+'s optimizers list their slots with their own variables; those
        # have their weight's shape, the optimizer's own variables are scalars
        return [v for v in list(variables or []) if len(getattr(v, "shape", ())) == 0]

    def _save_optimizer_variables(self):
        """Registers and offers the optimizer's own variables: saved where the
        optimizer_variables collection or another one (a custom collection's regex) is due."""
        variables = self._optimizer_variables()
        self._register_optimizer_variables(variables)
        self._save_values((variable_name(v), v) for v in variables)

    def _end(self, mode, batch, logs):
        self._in_batch = None
        if not _smd.smd_hook_any_due(self._hook):
            return
        if self._xla_groups:
            self._save_captured_variables()
        if self._grad_reduced_now and self._grad_stats is not None:
            self._save_gradient_statistics()
        held, self._held = self._held, {}
        self._save_values(held.items())
        self._save_logs(logs)
        # smdebug saves the batch's index in its epoch as the metric "batch" (an int64)
        self._save_log_value("batch", np.array([batch], dtype=np.int64))
        pairs = []
        if mode is ModeKeys.PREDICT and logs and "outputs" in logs:
            pairs += _flat_named("predictions", logs["outputs"])
        model = self.model
        self._register_variables()
        pairs += [(variable_name(v), v) for v in (getattr(model, "weights", []) if model is not None else [])]
        if mode is ModeKeys.TRAIN:
            variables = self._optimizer_variables()
            self._register_optimizer_variables(variables)
            pairs += [(variable_name(v), v) for v in variables]
        pairs += list(self._custom.items())
        self._save_values(pairs)

    def _save_logs(self, logs, only_prefix=None):
        for key, value in (logs or {}).items():
            if key in _SKIPPED_LOG_KEYS or (only_prefix and not key.startswith(only_prefix)):
                continue
            try:
                flat = np.asarray(to_numpy(value), dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                continue  # not numeric: Keras logs numbers for losses and metrics
            if flat.size != 1:
                continue
            self._save_log_value(key, np.array([flat[0]], dtype=np.float64))

    def _save_log_value(self, key, value):
        if key not in self._registered:
            self._registered.add(key)
            coll = CollectionKeys.LOSSES if key in ("loss", "val_loss") else CollectionKeys.METRICS
            Hook.get_collection(self, coll).add_tensor_name(key)
        if key in self._saved_now or not _smd.smd_hook_is_due(self._hook, key):
            return
        self._saved_now.add(key)
        self.save_tensor(key, value, [])

    # -- Keras callback methods ----------------------------------------------------------------
    def _any_begin(self):
        self._in_batch = None  # a batch that an exception interrupted never ended

    def on_train_begin(self, logs=None):
        self._any_begin()

    def on_test_begin(self, logs=None):
        self._any_begin()

    def on_predict_begin(self, logs=None):
        self._any_begin()

    def on_train_batch_begin(self, batch, logs=None):
        self._begin(ModeKeys.TRAIN)

    def on_test_batch_begin(self, batch, logs=None):
        self._begin(ModeKeys.EVAL)

    def on_predict_batch_begin(self, batch, logs=None):
        self._begin(ModeKeys.PREDICT)

    def on_train_batch_end(self, batch, logs=None):
        self._end(ModeKeys.TRAIN, batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._end(ModeKeys.EVAL, batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._end(ModeKeys.PREDICT, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        # As smdebug's: the epoch's logs (its losses and metrics, validation results included, and
        # "batch" = the epoch's index) go into the current step (the epoch's last batch, or the
        # last validation batch) whatever the save configuration; where the batch saved the same
        # name in that step, both are written and readers give the epoch's (the later) value.
        if self.step < 0 or self._in_batch is not None or logs is None:
            return
        for coll in (CollectionKeys.METRICS, CollectionKeys.LOSSES):
            self.make_due(coll)
        self._saved_now.difference_update(logs)
        self._saved_now.discard("batch")
        self._save_logs(logs)
        self._save_log_value("batch", np.array([epoch], dtype=np.int64))

    # -- GradientTape loops --------------------------------------------------------------------
    def _tape_begin(self):
        if not tf.executing_eagerly():
            raise RuntimeError("wrap_tape: the wrapped tape was entered inside a tf.function; the "
                               "hook steps and saves in eager execution only (use model.fit with "
                               "the hook as a callback for compiled training)")
        self.begin_step()
        self._current_mode = self.mode
        self._saved_now.clear()
        self._in_tape_step = True

    def _tape_gradient(self, target, sources, grads):
        if not _smd.smd_hook_any_due(self._hook):
            return
        pairs = []
        for v, g in zip(tf.nest.flatten(sources), tf.nest.flatten(grads)):
            if not hasattr(v, "numpy") or not hasattr(v, "name"):
                continue
            name = variable_name(v)
            if name not in self._registered:
                self._registered.add(name)
                coll = CollectionKeys.BIASES if "bias" in name else CollectionKeys.WEIGHTS
                self._colls[coll].add_tensor_name(name)
            if g is not None:
                pairs.append((gradient_name(v), g))
            pairs.append((name, v))
        flat = tf.nest.flatten(target)
        if len(flat) == 1 and tf.size(flat[0]) == 1:
            pairs.append(("loss", tf.reshape(flat[0], [1])))
        self._save_values(pairs)


class _GradStats:
    """The statistics (`columns`, names from _reduce.STATS) of the gradients of `signature`
    (((name, static shape, dtype), ...)) that the train step assigns to `variable` (a float64
    matrix, a row per gradient) when asked, and their histogram bucket counts to `counts` (None
    when the step computes none); `stamp`: the number of the batch whose step assigned them last."""

    def __init__(self, signature, variable, columns, counts, stamp):
        self.signature, self.variable, self.columns, self.counts, self.stamp = (
            signature, variable, columns, counts, stamp)
        self.names = tuple(n for n, _, _ in signature)
        self.shapes = [list(shape) for _, shape, _ in signature]
        self.dtypes = [dtype for _, _, dtype in signature]
        self.name_set, self.column_set = set(self.names), set(columns)


class _Slots:
    """Variables a step compiled by XLA assigns the tensors of one capture point to, on a step
    whose flag `which` is set, and the number of the batch that did it last."""

    def __init__(self, which, names, variables, stamp):
        self.which, self.names, self.variables, self.stamp = which, names, variables, stamp


class _WrappedTape:
    """A GradientTape whose `with` block is one step of the hook and whose gradient() saves."""

    def __init__(self, hook, tape):
        self._hook = hook
        self._tape = tape

    def __enter__(self):
        self._hook._tape_begin()
        self._tape.__enter__()
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def gradient(self, target, sources, *args, **kwargs):
        for t in tf.nest.flatten(target):
            if not (tf.is_tensor(t) or isinstance(t, tf.Variable)):
                raise TypeError(f"tape.gradient: the loss must be a tf.Tensor, not {type(t).__name__} "
                                "(a Python number has no gradient)")
        grads = self._tape.gradient(target, sources, *args, **kwargs)
        self._hook._tape_gradient(target, sources, grads)
        return grads

    def __getattr__(self, name):
        return getattr(self._tape, name)


def _dense(t):
    """An IndexedSlices (a sparse gradient) as its dense tensor; other tensors as they are."""
    return tf.convert_to_tensor(t) if isinstance(t, tf.IndexedSlices) else t


def _unscaled(optimizer, grads, variables):
    """The gradients as the optimizer applies them. Keras 3's LossScaleOptimizer (mixed
    precision) is handed the gradients of the scaled loss and divides them by its loss scale
    before its inner optimizer applies them; Keras 2's is handed them divided. The hook saves them
    divided in both, overflowed ones (inf, NaN) too, though the optimizer then skips the update."""
    scale = getattr(optimizer, "dynamic_scale", None)
    if scale is None or getattr(optimizer, "inner_optimizer", None) is None:
        return grads
    overwrite = getattr(optimizer, "_overwrite_variable_with_gradient", None)
    out = []
    for g, v in zip(grads, variables):
        if g is None or (overwrite is not None and overwrite(v)):
            out.append(g)
        elif isinstance(g, tf.IndexedSlices):
            out.append(tf.IndexedSlices(g.values / tf.cast(scale, g.values.dtype), g.indices,
                                        g.dense_shape))
        else:
            out.append(g / tf.cast(scale, g.dtype))
    return out


def _replica_index():
    """The replica, among this process's, of a tf.distribute strategy whose step is being traced
    (0 without a strategy, in a cross-replica context, or when the index is not known when
    tracing). replica_id_in_sync_group counts every worker's replicas (MultiWorkerMirrored:
    worker * local replicas + local replica)."""
    ctx = tf.distribute.get_replica_context()
    if ctx is None:
        return 0
    try:
        index = tf.get_static_value(ctx.replica_id_in_sync_group)
    except (TypeError, ValueError):
        return 0
    if index is None:
        return 0
    try:
        local = len(ctx.strategy.extended.worker_devices)
    except (AttributeError, NotImplementedError, RuntimeError, TypeError):
        local = 0
    return int(index) % local if local > 0 else int(index)


def _steps_per_execution(model):
    """Train steps Keras runs in one call of its train function (and one batch of callbacks)."""
    v = getattr(model, "steps_per_execution", None)
    if v is None:
        v = getattr(model, "_steps_per_execution", None)  # Keras 2: a variable
    try:
        return max(1, int(v.numpy() if hasattr(v, "numpy") else (v or 1)))
    except (TypeError, ValueError):
        return 1


def _symbolic(value):
    """True for Keras symbolic tensors (model building), which have no values to save."""
    return any(type(t).__name__ == "KerasTensor" for t in tf.nest.flatten(value))


def _flat_named(name, value):
    flat = tf.nest.flatten(value)
    if len(flat) == 1:
        return [(name, flat[0])]
    return [(f"{name}_{i}", t) for i, t in enumerate(flat)]
