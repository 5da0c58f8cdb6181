"""smdebug's MXNet (Gluon) hook over smd's writer: ``smd.mxnet.Hook``.

``register_block(net)`` adds a forward pre-hook to the network (each forward pass of it starts a
step) and, while steps are due, forward hooks to it and those of its child blocks whose outputs
(or inputs) a collection the hook saves can hold. As in smdebug, a step's
parameters (``<param.name>``, e.g. ``dense0_weight``) and gradients (``gradient/<param.name>``)
are saved when the NEXT step starts (or at close), so they are the values after that step's
backward pass and update; block tensors are ``<block.name>_output_<i>`` / ``_input_<i>``, a loss
block's output ``<loss.name>_output_0`` (e.g. ``softmaxcrossentropyloss0_output_0``).
"""
import re
import warnings
import weakref

import mxnet as mx

import smd._framework as _fw
import smd.hook as _core
from smd import smdc as _smd
from smd.collection_keys import CollectionKeys

INPUT_SUFFIX = "_input_"
OUTPUT_SUFFIX = "_output_"
GRADIENT_PREFIX = "gradient/"

# block -> weakref of the hook it is registered with (not an attribute of the block: a registered
# block must still pickle).
_OWNER = weakref.WeakKeyDictionary()


def get_hook(json_config_path=None, create_if_not_exists=True):
    """The hook created last in this process (or given to ``set_hook``); else, as smdebug's MXNet
    get_hook, one from the JSON configuration (``json_config_path`` or
    $SMDEBUG_CONFIG_FILE_PATH), or None without such a file."""
    return _fw.get_hook(Hook, json_config_path, create_if_not_exists)


set_hook = _fw.set_hook
del_hook = _fw.del_hook


class Collection(_fw.OwnedCollection):
    """smdebug's MXNet collection: adds ``add_block_tensors``. ``Collection(name, include_regex,
    tensor_names, reduction_config, save_config, save_histogram)`` makes a detached one, as
    smdebug's, for ``hook.add_collection``."""

    def add_block_tensors(self, block, inputs=False, outputs=True):
        """Adds the inputs and/or outputs of a Gluon block (by its name) to this collection."""
        if not isinstance(block, mx.gluon.Block):
            raise TypeError(f"add_block_tensors takes an mxnet.gluon.Block, not {type(block).__name__}")
        hook = self.owner()
        if inputs and hook is not None:
            hook._inputs_wanted.add(block.name)
        if inputs:
            self.include("^" + re.escape(block.name + INPUT_SUFFIX))
        if outputs:
            self.include("^" + re.escape(block.name + OUTPUT_SUFFIX))


class Hook(_core.Hook):
    """smdebug's ``smdebug.mxnet.Hook``: same constructor arguments, ``register_block`` (a network
    or a loss block), ``save_tensor``/``save_scalar`` with NDArrays, ``set_mode``,
    ``get_collection(...).add_block_tensors``, ``close``."""

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one", *, _handle=None,
                 **smd_options):
        if _handle is None and out_dir is None:
            raise TypeError("smd.mxnet.Hook needs an out_dir (or use Hook.create_from_json_file())")
        super().__init__(out_dir, export_tensorboard, tensorboard_dir, dry_run, reduction_config,
                         save_config, include_regex, include_collections, save_all, include_workers,
                         _handle=_handle, **smd_options)
        self._blocks = []          # (block, is a loss block), every registered one
        self._registered = set()   # id() of the registered blocks
        self._handles = []         # pre-hooks, removed by close()
        self._step_handles = []    # forward hooks, attached while steps are due
        self._hooked = False
        self._version = None       # the collections version the attached forward hooks are for
        self._due = False
        self._params_pending = None  # the network whose parameters the due step still owes
        self._unloggable = set()    # parameters that could not be read (warned of once)
        self._counts = {}
        self._inputs_wanted = set()  # loss blocks whose inputs a collection asked for
        self._save_all = bool(save_all)
        self._closed = False
        _fw.hook_created(self)

    # -- registration ------------------------------------------------------------------------
    def register_block(self, block):
        """Hooks a Gluon network (each forward pass of it starts a step; its parameters and
        gradients are saved) or a loss block (its output is saved in ``losses``)."""
        if not isinstance(block, mx.gluon.Block):
            raise TypeError(f"register_block takes an mxnet.gluon.Block, not {type(block).__name__}")
        if id(block) in self._registered:
            raise ValueError(f"block {block.name} is already registered with this hook")
        other = _OWNER.get(block)
        other = other() if other is not None else None
        if other is not None and other is not self and not other._closed:
            raise ValueError(f"block {block.name} is registered with another open smd hook: close "
                             "that hook first (two hooks would each count steps on the same block)")
        is_loss = isinstance(block, mx.gluon.loss.Loss)
        if not is_loss:
            if not block.collect_params().keys():
                raise ValueError(f"block {block.name} has no parameters: register the network that "
                                 "owns them (weights, biases and gradients come from its "
                                 "parameters); a loss block is registered as such")
            self._handles.append(block.register_forward_pre_hook(_fw.Callback(self, "_forward_pre_hook")))
        self._registered.add(id(block))
        _OWNER[block] = weakref.ref(self)
        self._blocks.append((block, is_loss))
        self._hooked = None  # attach the forward hooks again at the next step

    register_hook = register_block  # smdebug's other name

    def get_collection(self, name, create=True):
        c = super().get_collection(name, create)
        return Collection(c.name, _handle=c._c, _state=c._state, _hook=self)

    def add_collection(self, collection):
        super().add_collection(collection)
        if isinstance(collection, Collection):
            collection.adopt(self)

    # -- MXNet hooks -------------------------------------------------------------------------
    def _log_params(self, block):
        for p in block.collect_params().values():
            try:
                ctx = p.list_ctx()[0]
                data = p.data(ctx)
                try:
                    grad = p.grad(ctx) if p.grad_req != "null" else None
                except (RuntimeError, ValueError):
                    grad = None  # (no gradient buffer: its data is still saved)
            except (RuntimeError, ValueError) as e:
                # a parameter not initialized yet (deferred shape inference of a child block the
                # forward pass never ran): skipped with a warning, as smdebug does (MXNetError
                # is a RuntimeError)
                if p.name not in self._unloggable:
                    self._unloggable.add(p.name)
                    warnings.warn(f"smd.mxnet.Hook: parameter {p.name} is not saved: "
                                  f"{str(e).splitlines()[0]}", RuntimeWarning, stacklevel=3)
                continue
            self._offer(p.name, data)
            if grad is not None:
                self._offer(GRADIENT_PREFIX + p.name, grad)

    def _forward_pre_hook(self, block, inputs):
        if self._params_pending is not None:
            pending, self._params_pending = self._params_pending, None
            self._log_params(pending)  # the previous (due) step's, after its update
        self.begin_step()
        self._counts.clear()
        self._due = _smd.smd_hook_any_due(self._hook)
        if self._due:
            version = _smd.smd_hook_collections_version(self._hook)
            if version != self._version:  # which blocks can save anything is decided again
                self._version, self._hooked = version, None
        if self._due != self._hooked:
            self._attach_step_hooks(self._due)
        if self._due:
            self._params_pending = block

    def _attach_step_hooks(self, on):
        for h in self._step_handles:
            h.detach()
        self._step_handles = []
        if on:
            seen = set()
            forward_hook = _fw.Callback(self, "_forward_hook")

            def attach(b):
                if id(b) not in seen:
                    seen.add(id(b))
                    if self._may_save_block(b):
                        self._step_handles.append(b.register_forward_hook(forward_hook))
            for block, is_loss in self._blocks:
                if is_loss:
                    attach(block)
                else:
                    block.apply(attach)
        self._hooked = on

    def _writes_inputs(self, block):
        # A loss block's inputs (the predictions and labels) only when asked for: smd's losses
        # collection matches "[Ll]oss" anywhere in a name, smdebug's only loss outputs.
        return (not isinstance(block, mx.gluon.loss.Loss) or self._save_all
                or block.name in self._inputs_wanted)

    def _may_save_block(self, block):
        # Whether a collection the hook saves can hold one of the block's numbered outputs (or
        # inputs): the others get no forward hook (by default only the loss block has one).
        may, h = _smd.smd_hook_may_save, self._hook
        return (may(h, block.name + OUTPUT_SUFFIX, True)
                or (self._writes_inputs(block) and may(h, block.name + INPUT_SUFFIX, True)))

    def _forward_hook(self, block, inputs, outputs):
        if not self._due:
            return
        if self._writes_inputs(block):
            self._write(block.name, INPUT_SUFFIX, inputs)
        self._write(block.name, OUTPUT_SUFFIX, outputs)

    def _write(self, block_name, suffix, value):
        key = block_name + suffix
        self._counts[key] = self._write_nested(key, value, self._counts.get(key, 0))

    def _write_nested(self, key, value, idx):
        if isinstance(value, mx.nd.NDArray):
            self._offer(key + str(idx), value)
            return idx + 1
        if isinstance(value, (tuple, list)):
            for v in value:
                idx = self._write_nested(key, v, idx)
        return idx

    def _offer(self, name, value):
        if _smd.smd_hook_is_due(self._hook, name):
            super().save_tensor(name, value.asnumpy(), [])

    # -- saving ------------------------------------------------------------------------------
    def save_tensor(self, tensor_name, tensor_value, collections_to_write=CollectionKeys.DEFAULT):
        """As smd.Hook.save_tensor; also takes NDArrays (copied to host memory by asnumpy)."""
        if isinstance(tensor_value, mx.nd.NDArray):
            tensor_value = tensor_value.asnumpy()
        return super().save_tensor(tensor_name, tensor_value, collections_to_write)

    def save_scalar(self, name, value, sm_metric=False, timestamp=None):
        if isinstance(value, mx.nd.NDArray):
            if value.size != 1:
                raise TypeError(f"save_scalar({name!r}): an NDArray of {value.size} elements is not a scalar")
            value = value.asscalar()
        return super().save_scalar(name, value, sm_metric, timestamp)

    def __reduce_ex__(self, protocol):
        # A registered block holds the hook's callbacks, so pickling or deep-copying the block
        # reaches the hook: it travels as a stand-in whose callbacks do nothing.
        return (_fw.detached, ("smd.mxnet.Hook",))

    # -- end ---------------------------------------------------------------------------------
    def close(self):
        """Saves what the last due step still owes (its parameters and gradients), removes the
        hooks and closes the writer."""
        if self._closed:
            super().close()
            return
        self._closed = True
        try:
            if self._params_pending is not None:
                pending, self._params_pending = self._params_pending, None
                self._log_params(pending)
        finally:  # the hooks are removed and the writer closed whatever saving them raised
            for h in self._handles + self._step_handles:
                h.detach()
            self._handles, self._step_handles = [], []
            super().close()
