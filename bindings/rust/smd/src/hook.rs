//! Writing trials: save and reduction configurations, hook options, the hook and its collections.
use crate::error::{check, Error, Result};
use crate::types::{DType, Element, Mode};
use crate::util::{borrowed_str, cstring, owned_string, strarray, take_array, with_cstr, CStrList};
use smd_sys as sys;
use std::ffi::c_char;
use std::path::Path;
use std::ptr;

macro_rules! owned_handle {
    ($(#[$m:meta])* $name:ident, $raw:ty, $free:path) => {
        $(#[$m])*
        pub struct $name {
            pub(crate) raw: *mut $raw,
        }
        impl $name {
            /// The C handle, still owned by this object (for calls through `smd::sys`).
            pub fn as_raw(&self) -> *mut $raw {
                self.raw
            }
        }
        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: we own the handle; the _free functions accept NULL.
                unsafe { $free(self.raw) }
            }
        }
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($name), "({:p})"), self.raw)
            }
        }
    };
}
pub(crate) use owned_handle;

/// Calls a `create(out)` style function and returns the handle it made.
pub(crate) fn create<T>(f: impl FnOnce(*mut *mut T) -> *mut sys::smd_error) -> Result<*mut T> {
    let mut out = ptr::null_mut();
    check(f(&mut out))?;
    Ok(out)
}

pub(crate) fn path_str<'a>(p: &'a Path, what: &str) -> Result<&'a str> {
    p.to_str().ok_or_else(|| Error::invalid(format!("{what} {} is not valid UTF-8", p.display())))
}

owned_handle!(
    /// smdebug's SaveConfig: which steps of each mode are saved. A plain value (`Send`, one
    /// thread at a time); the hook copies it.
    SaveConfig, sys::smd_save_config, sys::smd_save_config_free
);
// SAFETY: plain values may move between threads (docs/threading.md).
unsafe impl Send for SaveConfig {}

impl SaveConfig {
    /// A configuration with every mode unset.
    pub fn new() -> Result<SaveConfig> {
        Ok(SaveConfig { raw: create(|o| unsafe { sys::smd_save_config_create(o) })? })
    }

    /// Sets mode `mode` (or `Mode::All`): every `save_interval` steps from `start_step` to
    /// `end_step` (exclusive, -1: no end), plus the listed `save_steps` when not empty (then only those).
    pub fn set(&mut self, mode: Mode, save_interval: i64, start_step: i64, end_step: i64, save_steps: &[i64]) -> Result<&mut Self> {
        let p = if save_steps.is_empty() { ptr::null() } else { save_steps.as_ptr() };
        check(unsafe { sys::smd_save_config_set(self.raw, mode.raw(), save_interval, start_step, end_step, p, save_steps.len()) })?;
        Ok(self)
    }

    /// Sets only the save interval of a mode.
    pub fn set_interval(&mut self, mode: Mode, save_interval: i64) -> Result<&mut Self> {
        check(unsafe { sys::smd_save_config_set_interval(self.raw, mode.raw(), save_interval) })?;
        Ok(self)
    }

    /// Makes a mode (or all) unset again.
    pub fn unset(&mut self, mode: Mode) -> Result<&mut Self> {
        check(unsafe { sys::smd_save_config_unset(self.raw, mode.raw()) })?;
        Ok(self)
    }

    /// Whether `mode_step` of `mode` is saved by this configuration.
    pub fn should_save(&self, mode_step: i64, mode: Mode) -> Result<bool> {
        let mut out = false;
        check(unsafe { sys::smd_save_config_should_save(self.raw, mode_step, mode.raw(), &mut out) })?;
        Ok(out)
    }

    /// A copy.
    pub fn try_clone(&self) -> Result<SaveConfig> {
        Ok(SaveConfig { raw: create(|o| unsafe { sys::smd_save_config_clone(self.raw, o) })? })
    }

    /// The settings of `mode` (not `Mode::All`), or `None` when the mode is unset.
    pub fn settings(&self, mode: Mode) -> Result<Option<SaveConfigMode>> {
        let (mut set, mut interval, mut start, mut end) = (false, 0i64, 0i64, 0i64);
        let mut steps: *mut i64 = ptr::null_mut();
        let mut n = 0usize;
        check(unsafe {
            sys::smd_save_config_settings(self.raw, mode.raw(), &mut set, &mut interval, &mut start, &mut end, &mut steps, &mut n)
        })?;
        let save_steps = take_array(steps, n);
        Ok(set.then(|| SaveConfigMode {
            save_interval: interval,
            start_step: start,
            end_step: (end >= 0).then_some(end),
            save_steps,
        }))
    }
}

/// One mode's settings in a [`SaveConfig`] (smdebug's SaveConfigMode): every `save_interval`
/// steps from `start_step` up to `end_step` (exclusive; `None`: no end), plus `save_steps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveConfigMode {
    /// Save every this many steps (at least 1).
    pub save_interval: i64,
    /// The first step the interval counts from.
    pub start_step: i64,
    /// The step the interval stops before; `None`: no end.
    pub end_step: Option<i64>,
    /// Steps saved whatever the interval says.
    pub save_steps: Vec<i64>,
}

owned_handle!(
    /// smdebug's ReductionConfig: reductions, raw tensor and shape saving. A plain value.
    ReductionConfig, sys::smd_reduction_config, sys::smd_reduction_config_free
);
// SAFETY: plain value.
unsafe impl Send for ReductionConfig {}

impl ReductionConfig {
    /// No reductions, no raw tensor, no shape.
    pub fn new() -> Result<ReductionConfig> {
        Ok(ReductionConfig { raw: create(|o| unsafe { sys::smd_reduction_config_create(o) })? })
    }

    /// Parses a comma-separated list as SageMaker passes it ("min,abs_mean,l2_norm").
    pub fn parse(reductions: &str) -> Result<ReductionConfig> {
        let c = cstring(reductions, "reductions")?;
        Ok(ReductionConfig { raw: create(|o| unsafe { sys::smd_reduction_config_parse(c.as_ptr(), o) })? })
    }

    /// Adds a reduction by name ("min", "abs_l2_norm", ...).
    pub fn add(&mut self, name: &str) -> Result<&mut Self> {
        let c = cstring(name, "reduction")?;
        check(unsafe { sys::smd_reduction_config_add(self.raw, c.as_ptr()) })?;
        Ok(self)
    }

    /// Whether the raw tensor is saved too.
    pub fn set_save_raw_tensor(&mut self, save: bool) -> Result<&mut Self> {
        check(unsafe { sys::smd_reduction_config_set_save_raw_tensor(self.raw, save) })?;
        Ok(self)
    }

    /// Whether the shape is saved.
    pub fn set_save_shape(&mut self, save: bool) -> Result<&mut Self> {
        check(unsafe { sys::smd_reduction_config_set_save_shape(self.raw, save) })?;
        Ok(self)
    }

    /// smdebug's serialized form ("min,l2_norm,abs_mean").
    pub fn to_config_string(&self) -> Result<String> {
        Ok(owned_string(|out| unsafe { sys::smd_reduction_config_to_string(self.raw, out) })?.unwrap_or_default())
    }

    /// A copy.
    pub fn try_clone(&self) -> Result<ReductionConfig> {
        Ok(ReductionConfig { raw: create(|o| unsafe { sys::smd_reduction_config_clone(self.raw, o) })? })
    }
}

/// What [`Hook::save_tensor`] would write for a tensor now ([`Hook::due_reductions`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DueReductions {
    /// The due reductions in the order they are written, each as `"[abs_]<name>"` (`"min"`,
    /// `"abs_l2"`, ...).
    pub reductions: Vec<String>,
    /// The tensor's elements themselves are needed (a due collection saves raw tensors, or a
    /// TensorBoard scalar summary may be exported): save it with [`Hook::save_tensor`].
    pub value: bool,
    /// A TensorBoard histogram of the tensor may be exported: give one to
    /// [`Hook::save_reductions`] (see [`Histogram`]), or save the tensor itself.
    pub histogram: bool,
}

/// A tensor's TensorBoard histogram computed by the caller, for [`Hook::save_reductions`].
///
/// `counts[i]` is the number of elements `x` (as `f64`; complex: the real part) with
/// `edges[i] <= x < edges[i + 1]` over the edges of [`histogram_bucket_edges`] (the last bucket
/// also holds `x` equal to its right edge), so there is one count fewer than edges; NaN,
/// infinities and values outside the edges are in no bucket. `min`, `max`, `sum` and
/// `sum_squares` are over all elements as `f64` (NaN in any of them when an element is NaN:
/// `min` and `max` are then both NaN). smd trims the buckets as it does for the histograms it
/// computes; a histogram with every count 0 is not written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Histogram<'a> {
    /// The smallest element.
    pub min: f64,
    /// The largest element.
    pub max: f64,
    /// The sum of the elements.
    pub sum: f64,
    /// The sum of their squares.
    pub sum_squares: f64,
    /// The bucket counts, `histogram_bucket_edges().len() - 1` of them.
    pub counts: &'a [u64],
}

impl Histogram<'_> {
    fn raw(&self) -> sys::smd_histogram {
        sys::smd_histogram {
            min: self.min,
            max: self.max,
            sum: self.sum,
            sum_squares: self.sum_squares,
            counts: if self.counts.is_empty() { ptr::null() } else { self.counts.as_ptr() },
            n_counts: self.counts.len(),
        }
    }
}

/// The bucket edges of smd's (and smdebug's) TensorBoard histograms, ascending: 0, then
/// +-1e-12 times powers of 1.1 below 1e20 (1,549 edges, 1,548 buckets). A [`Histogram`]'s
/// counts are over these.
pub fn histogram_bucket_edges() -> &'static [f64] {
    let mut n = 0usize;
    // SAFETY: a static array of n doubles, never freed or changed for the life of the process.
    unsafe {
        let p = sys::smd_histogram_bucket_edges(&mut n);
        if p.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(p, n)
        }
    }
}

/// Every reduction name the library accepts (each also takes an "abs_" prefix).
pub fn reduction_names() -> Result<Vec<String>> {
    strarray(|o| unsafe { sys::smd_reduction_names(o) })
}

/// Which workers write tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeWorkers {
    /// Only the chief worker (worker_0), the default.
    One,
    /// Every worker writes its own files.
    All,
}

owned_handle!(
    /// Options of a hook (all of smdebug's hook arguments). A plain value; the hook copies it.
    HookOptions, sys::smd_hook_options, sys::smd_hook_options_free
);
// SAFETY: plain value.
unsafe impl Send for HookOptions {}

macro_rules! option_setters {
    ($($(#[$m:meta])* $fn:ident($arg:ident: $t:ty) => $c:ident;)*) => {$(
        $(#[$m])*
        pub fn $fn(&mut self, $arg: $t) -> Result<&mut Self> {
            check(unsafe { sys::$c(self.raw, $arg) })?;
            Ok(self)
        }
    )*};
}

impl HookOptions {
    /// Every default: save every 500 steps, raw tensors, no reductions.
    pub fn new() -> Result<HookOptions> {
        Ok(HookOptions { raw: create(|o| unsafe { sys::smd_hook_options_create(o) })? })
    }

    /// The hook-wide save configuration (copied).
    pub fn set_save_config(&mut self, config: &SaveConfig) -> Result<&mut Self> {
        check(unsafe { sys::smd_hook_options_set_save_config(self.raw, config.raw) })?;
        Ok(self)
    }

    /// The hook-wide reduction configuration (copied).
    pub fn set_reduction_config(&mut self, config: &ReductionConfig) -> Result<&mut Self> {
        check(unsafe { sys::smd_hook_options_set_reduction_config(self.raw, config.raw) })?;
        Ok(self)
    }

    /// Appends a regex (Python `re` syntax) to the "default" collection.
    pub fn add_include_regex(&mut self, regex: &str) -> Result<&mut Self> {
        let c = cstring(regex, "include regex")?;
        check(unsafe { sys::smd_hook_options_add_include_regex(self.raw, c.as_ptr()) })?;
        Ok(self)
    }

    /// Saves the named collection.
    pub fn add_include_collection(&mut self, name: &str) -> Result<&mut Self> {
        let c = cstring(name, "collection name")?;
        check(unsafe { sys::smd_hook_options_add_include_collection(self.raw, c.as_ptr()) })?;
        Ok(self)
    }

    /// Which workers write.
    pub fn set_include_workers(&mut self, which: IncludeWorkers) -> Result<&mut Self> {
        let w = match which {
            IncludeWorkers::One => sys::SMD_INCLUDE_WORKERS_ONE,
            IncludeWorkers::All => sys::SMD_INCLUDE_WORKERS_ALL,
        };
        check(unsafe { sys::smd_hook_options_set_include_workers(self.raw, w) })?;
        Ok(self)
    }

    /// This process's worker name.
    pub fn set_worker(&mut self, worker: &str) -> Result<&mut Self> {
        let c = cstring(worker, "worker")?;
        check(unsafe { sys::smd_hook_options_set_worker(self.raw, c.as_ptr()) })?;
        Ok(self)
    }

    /// The TensorBoard log folder (turns the export on).
    pub fn set_tensorboard_dir(&mut self, dir: impl AsRef<Path>) -> Result<&mut Self> {
        let c = cstring(path_str(dir.as_ref(), "tensorboard dir")?, "tensorboard dir")?;
        check(unsafe { sys::smd_hook_options_set_tensorboard_dir(self.raw, c.as_ptr()) })?;
        Ok(self)
    }

    option_setters! {
        /// Saves every tensor offered, and every collection.
        set_save_all(save_all: bool) => smd_hook_options_set_save_all;
        /// The number of workers.
        set_num_workers(num_workers: i64) => smd_hook_options_set_num_workers;
        /// Decide and count everything, write nothing.
        set_dry_run(dry_run: bool) => smd_hook_options_set_dry_run;
        /// Write the real CRC32C of each record's payload.
        set_real_payload_crc(real: bool) => smd_hook_options_set_real_payload_crc;
        /// Keep a TensorFlow name's `:<digits>` in its reduction tags, so that the reductions of
        /// `dense/kernel:0` belong to that name (smdebug's TensorFlow hooks); by default the index
        /// is dropped and they belong to `dense/kernel` (its other hooks).
        set_keep_colon_index(keep: bool) => smd_hook_options_set_keep_colon_index;
        /// Reproducible output: wall time = base + global step.
        set_wall_time_base(base: f64) => smd_hook_options_set_wall_time_base;
        /// Bytes of tensor data the hook may hold waiting to be written.
        set_memory_budget(bytes: usize) => smd_hook_options_set_memory_budget;
        /// The most steps the writer may fall behind.
        set_max_pending_steps(steps: i64) => smd_hook_options_set_max_pending_steps;
        /// Whether close writes training_job_end.ts.
        set_write_end_marker(write: bool) => smd_hook_options_set_write_end_marker;
        /// TensorBoard export of scalar collections and histograms.
        set_export_tensorboard(on: bool) => smd_hook_options_set_export_tensorboard;
        /// fsync every file before its rename and its folder after it, so that a step visible
        /// in the index survives a power loss (default off, as in smdebug; docs/durability.md).
        set_fsync(on: bool) => smd_hook_options_set_fsync;
    }

    /// How to reach an `s3://` out_dir or TensorBoard folder (local paths ignore it), replacing
    /// any settings given before; `S3Settings::default()` goes back to the AWS configuration chain.
    pub fn set_s3(&mut self, settings: &crate::S3Settings) -> Result<&mut Self> {
        let storage = settings.storage()?;
        // SAFETY: both objects are live; the hook options copy the storage options.
        check(unsafe { sys::smd_hook_options_set_storage(self.raw, storage.as_ptr()) })?;
        Ok(self)
    }
}

/// What a hook's writer has done so far.
pub type HookStats = sys::smd_hook_stats;

owned_handle!(
    /// A hook writing one smdebug trial. `Send + Sync`: every function may be called from any
    /// thread; calls are serialized internally. Dropping it closes it (errors dropped: call
    /// [`Hook::close`] to see them).
    Hook, sys::smd_hook, sys::smd_hook_free
);
// SAFETY: docs/threading.md: every function of smd_hook may be called from any thread.
unsafe impl Send for Hook {}
unsafe impl Sync for Hook {}

impl Hook {
    /// A hook writing into `out_dir` (created if missing).
    pub fn new(out_dir: impl AsRef<Path>, options: Option<&HookOptions>) -> Result<Hook> {
        let c = cstring(path_str(out_dir.as_ref(), "out_dir")?, "out_dir")?;
        let o = options.map_or(ptr::null(), |o| o.raw as *const _);
        Ok(Hook { raw: create(|out| unsafe { sys::smd_hook_create(c.as_ptr(), o, out) })? })
    }

    /// A hook from smdebug's JSON hook configuration file.
    pub fn from_json_file(path: impl AsRef<Path>, options: Option<&HookOptions>) -> Result<Hook> {
        let c = cstring(path_str(path.as_ref(), "JSON path")?, "JSON path")?;
        let o = options.map_or(ptr::null(), |o| o.raw as *const _);
        Ok(Hook { raw: create(|out| unsafe { sys::smd_hook_create_from_json_file(c.as_ptr(), o, out) })? })
    }

    /// A hook from smdebug's JSON hook configuration text.
    pub fn from_json(json: &str, options: Option<&HookOptions>) -> Result<Hook> {
        let o = options.map_or(ptr::null(), |o| o.raw as *const _);
        Ok(Hook { raw: create(|out| unsafe { sys::smd_hook_create_from_json(json.as_ptr().cast(), json.len(), o, out) })? })
    }

    /// Drains everything queued, writes the collections file and the end marker.
    pub fn close(&self) -> Result<()> {
        check(unsafe { sys::smd_hook_close(self.raw) })
    }

    /// Waits until everything queued so far is written.
    pub fn flush(&self) -> Result<()> {
        check(unsafe { sys::smd_hook_flush(self.raw) })
    }

    /// Sets the current mode.
    pub fn set_mode(&self, mode: Mode) -> Result<()> {
        check(unsafe { sys::smd_hook_set_mode(self.raw, mode.raw()) })
    }

    /// The step boundary: ends the current step and starts the next.
    pub fn begin_step(&self) -> Result<()> {
        check(unsafe { sys::smd_hook_begin_step(self.raw) })
    }

    /// Ends the current step without beginning another: its files are completed (`flush` waits
    /// for them) so that a trial sees the step while the hook stays open. Saves made before the
    /// next `begin_step` are kept for the next step (`close` begins one for them). Nothing to do
    /// when no step is open.
    pub fn end_step(&self) -> Result<()> {
        check(unsafe { sys::smd_hook_end_step(self.raw) })
    }

    /// The current global step (-1 before the first `begin_step`).
    pub fn global_step(&self) -> i64 {
        unsafe { sys::smd_hook_global_step(self.raw) }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        Mode::from_raw(unsafe { sys::smd_hook_mode(self.raw) }).unwrap_or(Mode::Global)
    }

    /// The current mode step.
    pub fn mode_step(&self) -> i64 {
        unsafe { sys::smd_hook_mode_step(self.raw) }
    }

    /// This hook's worker name.
    pub fn worker(&self) -> &str {
        unsafe { borrowed_str(sys::smd_hook_worker(self.raw)) }
    }

    /// Whether a tensor of this name would be saved now.
    pub fn is_due(&self, name: &str) -> bool {
        with_cstr(name, "tensor name", |c| unsafe { sys::smd_hook_is_due(self.raw, c) }).unwrap_or(false)
    }

    /// Whether any collection is due at the current step.
    pub fn any_due(&self) -> bool {
        unsafe { sys::smd_hook_any_due(self.raw) }
    }

    /// Whether a tensor of this name can be saved at all under the collections as they are (it
    /// can belong to an included collection), whatever the step. With `numbered`, whether any
    /// name made of `name` and a decimal index ("relu_output_" for "relu_output_0", ...) can.
    /// False means offering it is useless until `collections_version` changes.
    pub fn may_save(&self, name: &str, numbered: bool) -> bool {
        with_cstr(name, "tensor name", |c| unsafe { sys::smd_hook_may_save(self.raw, c, numbered) }).unwrap_or(false)
    }

    /// A number that changes whenever the collections change (the answers of `may_save` hold
    /// while it stays the same).
    pub fn collections_version(&self) -> u64 {
        unsafe { sys::smd_hook_collections_version(self.raw) }
    }

    /// Whether a rule asked training to stop (stop_training.smd in out_dir).
    pub fn stop_requested(&self) -> Result<bool> {
        let mut out = false;
        check(unsafe { sys::smd_hook_stop_requested(self.raw, &mut out) })?;
        Ok(out)
    }

    /// Offers a tensor: saved (copied) if a collection it belongs to is due, else returns at
    /// once. `shape`'s product must equal `data.len()`. `collections` adds it to those.
    #[inline]
    pub fn save_tensor<T: Element>(&self, name: &str, shape: &[i64], data: &[T], collections: &[&str]) -> Result<()> {
        // SAFETY: T's layout is its dtype's; the slice is data.len() elements.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        self.save_tensor_bytes(name, T::DTYPE, shape, bytes, collections)
    }

    /// Offers a tensor of any dtype (float16, bfloat16, complex, ...) as little-endian bytes.
    pub fn save_tensor_bytes(&self, name: &str, dtype: DType, shape: &[i64], data: &[u8], collections: &[&str]) -> Result<()> {
        let shape_p = if shape.is_empty() { ptr::null() } else { shape.as_ptr() };
        let data_p = if data.is_empty() { ptr::null() } else { data.as_ptr().cast() };
        if collections.is_empty() {
            return with_cstr(name, "tensor name", |c| {
                check(unsafe {
                    sys::smd_hook_save_tensor(self.raw, c, dtype.raw(), shape_p, shape.len(), data_p, data.len(), ptr::null(), 0)
                })
            })?;
        }
        let cols = CStrList::new(collections, "collection name")?;
        let c = cstring(name, "tensor name")?;
        check(unsafe {
            sys::smd_hook_save_tensor(self.raw, c.as_ptr(), dtype.raw(), shape_p, shape.len(), data_p, data.len(), cols.as_ptr(), cols.len())
        })
    }

    /// Offers a 1-D tensor of strings.
    pub fn save_strings<S: AsRef<str>>(&self, name: &str, strings: &[S], collections: &[&str]) -> Result<()> {
        let ptrs: Vec<*const c_char> = strings.iter().map(|s| s.as_ref().as_ptr().cast()).collect();
        let lens: Vec<usize> = strings.iter().map(|s| s.as_ref().len()).collect();
        let cols = CStrList::new(collections, "collection name")?;
        let c = cstring(name, "tensor name")?;
        let (p, l) = if strings.is_empty() { (ptr::null(), ptr::null()) } else { (ptrs.as_ptr(), lens.as_ptr()) };
        check(unsafe { sys::smd_hook_save_strings(self.raw, c.as_ptr(), p, l, strings.len(), cols.as_ptr(), cols.len()) })
    }

    /// Saves a scalar as `"scalar/<name>"` (float64, shape `[1]`).
    pub fn save_scalar(&self, name: &str, value: f64) -> Result<()> {
        with_cstr(name, "scalar name", |c| check(unsafe { sys::smd_hook_save_scalar(self.raw, c, value) }))?
    }

    /// Saves a scalar keeping its type (`"scalar/<name>"`, shape `[1]`).
    pub fn save_scalar_typed<T: Element>(&self, name: &str, value: T) -> Result<()> {
        let p = (&value as *const T).cast();
        with_cstr(name, "scalar name", |c| {
            check(unsafe { sys::smd_hook_save_scalar_typed(self.raw, c, T::DTYPE.raw(), p, std::mem::size_of::<T>()) })
        })?
    }

    /// Saves a scalar keeping its type, with the record's wall time: `timestamp` in seconds since
    /// the Unix epoch (smdebug's `save_scalar(..., timestamp=)`); 0 means the time of the call.
    /// Before the first `begin_step` the scalar is kept and written into step 0.
    pub fn save_scalar_at<T: Element>(&self, name: &str, value: T, timestamp: f64) -> Result<()> {
        let p = (&value as *const T).cast();
        with_cstr(name, "scalar name", |c| {
            check(unsafe {
                sys::smd_hook_save_scalar_timestamped(self.raw, c, T::DTYPE.raw(), p, std::mem::size_of::<T>(), timestamp)
            })
        })?
    }

    /// Offers a DLPack tensor without a copy on the caller's side.
    ///
    /// # Safety
    /// `tensor` must describe valid memory as DLPack requires, for the duration of the call.
    pub unsafe fn save_dlpack(&self, name: &str, tensor: &sys::DLTensor, collections: &[&str]) -> Result<()> {
        let cols = CStrList::new(collections, "collection name")?;
        let c = cstring(name, "tensor name")?;
        check(sys::smd_hook_save_dlpack(self.raw, c.as_ptr(), tensor, cols.as_ptr(), cols.len()))
    }

    /// What `save_tensor` would write for a tensor of this name now (with no extra
    /// collections): see [`DueReductions`]. Nothing due: no reductions and both flags false.
    /// Errors: `InvalidArgument` (empty name), `InvalidState` (closed, or no step open).
    pub fn due_reductions(&self, name: &str) -> Result<DueReductions> {
        let c = cstring(name, "tensor name")?;
        let (mut value, mut histogram) = (false, false);
        let reductions =
            strarray(|o| unsafe { sys::smd_hook_due_reductions(self.raw, c.as_ptr(), o, &mut value, &mut histogram) })?;
        Ok(DueReductions { reductions, value, histogram })
    }

    /// Saves reductions the caller computed (on a GPU, say) for a tensor of `dtype` and `shape`
    /// whose elements smd never sees, exactly as `save_tensor` writes the ones it computes. Each
    /// value is `(reduction name without abs_, abs, value)`; every due reduction must be given
    /// (others are ignored). `histogram` is the tensor's TensorBoard histogram: required when
    /// [`due_reductions`](Hook::due_reductions) says one is due, ignored otherwise.
    ///
    /// Errors: `InvalidArgument` (an unknown reduction, a due one missing, a value the result
    /// dtype cannot hold, a due histogram not given or with the wrong number of buckets or more
    /// elements in them than the tensor has, `DType::String`, shape and name errors),
    /// `Unsupported` (a complex tensor's non-abs reduction), `InvalidState` (the tensor's value
    /// is due at this step: save it with `save_tensor`; closed; no step open).
    pub fn save_reductions(
        &self,
        name: &str,
        dtype: DType,
        shape: &[i64],
        values: &[(&str, bool, f64)],
        histogram: Option<&Histogram<'_>>,
        collections: &[&str],
    ) -> Result<()> {
        let names = values.iter().map(|v| cstring(v.0, "reduction name")).collect::<Result<Vec<_>>>()?;
        let vals: Vec<sys::smd_reduction_value> = values
            .iter()
            .zip(&names)
            .map(|(v, n)| sys::smd_reduction_value { reduction: n.as_ptr(), abs: v.1, value: v.2 })
            .collect();
        let hist = histogram.map(Histogram::raw);
        let hist_p = hist.as_ref().map_or(ptr::null(), |h| h as *const sys::smd_histogram);
        let cols = CStrList::new(collections, "collection name")?;
        let c = cstring(name, "tensor name")?;
        let shape_p = if shape.is_empty() { ptr::null() } else { shape.as_ptr() };
        let vals_p = if vals.is_empty() { ptr::null() } else { vals.as_ptr() };
        // SAFETY: every pointer (names, values, the histogram and its counts) outlives the call.
        check(unsafe {
            sys::smd_hook_save_reductions(
                self.raw,
                c.as_ptr(),
                dtype.raw(),
                shape_p,
                shape.len(),
                vals_p,
                vals.len(),
                hist_p,
                cols.as_ptr(),
                cols.len(),
            )
        })
    }

    /// What the writer has done so far.
    pub fn stats(&self) -> Result<HookStats> {
        let mut s = HookStats { struct_size: std::mem::size_of::<HookStats>(), ..Default::default() };
        check(unsafe { sys::smd_hook_writer_stats(self.raw, &mut s) })?;
        Ok(s)
    }

    /// The collection of that name, created (empty) if needed.
    pub fn collection(&self, name: &str) -> Result<Collection> {
        let c = cstring(name, "collection name")?;
        Ok(Collection { raw: create(|o| unsafe { sys::smd_hook_get_collection(self.raw, c.as_ptr(), o) })? })
    }

    /// Names of all collections, in creation order.
    pub fn collection_names(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_hook_collection_names(self.raw, o) })
    }

    /// Saves the named collection from now on.
    pub fn include_collection(&self, name: &str) -> Result<()> {
        let c = cstring(name, "collection name")?;
        check(unsafe { sys::smd_hook_include_collection(self.raw, c.as_ptr()) })
    }

    /// Saves an included collection for the rest of the current step whatever its save
    /// configuration says (the tensors saved into it until the step ends are written); the next
    /// `begin_step` or `end_step` ends it. Errors: `NotFound` (no such collection),
    /// `InvalidState` (closed, or no step open).
    pub fn make_due(&self, collection: &str) -> Result<()> {
        let c = cstring(collection, "collection name")?;
        check(unsafe { sys::smd_hook_make_due(self.raw, c.as_ptr()) })
    }
}

owned_handle!(
    /// A collection of a hook; thread safety as the hook's. Stays valid after the hook is dropped.
    Collection, sys::smd_collection, sys::smd_collection_free
);
// SAFETY: "like the hook it came from" (docs/threading.md).
unsafe impl Send for Collection {}
unsafe impl Sync for Collection {}

impl Collection {
    /// The collection's name.
    pub fn name(&self) -> &str {
        unsafe { borrowed_str(sys::smd_collection_name(self.raw)) }
    }

    /// Adds a regex of tensor names.
    pub fn add_include_regex(&self, regex: &str) -> Result<()> {
        let c = cstring(regex, "include regex")?;
        check(unsafe { sys::smd_collection_add_include_regex(self.raw, c.as_ptr()) })
    }

    /// Takes every include regex out of the collection, its built-in one too; the tensor names
    /// added to it, and those it already holds, stay.
    pub fn clear_include_regex(&self) -> Result<()> {
        check(unsafe { sys::smd_collection_clear_include_regex(self.raw) })
    }

    /// Adds a tensor by name.
    pub fn add_tensor_name(&self, name: &str) -> Result<()> {
        let c = cstring(name, "tensor name")?;
        check(unsafe { sys::smd_collection_add_tensor_name(self.raw, c.as_ptr()) })
    }

    /// The collection's own save configuration (copied); `None` removes it.
    pub fn set_save_config(&self, config: Option<&SaveConfig>) -> Result<()> {
        check(unsafe { sys::smd_collection_set_save_config(self.raw, config.map_or(ptr::null(), |c| c.raw)) })
    }

    /// The collection's own reduction configuration (copied); `None` removes it.
    pub fn set_reduction_config(&self, config: Option<&ReductionConfig>) -> Result<()> {
        check(unsafe { sys::smd_collection_set_reduction_config(self.raw, config.map_or(ptr::null(), |c| c.raw)) })
    }

    /// Whether its tensors get TensorBoard histograms.
    pub fn set_save_histogram(&self, save: bool) -> Result<()> {
        check(unsafe { sys::smd_collection_set_save_histogram(self.raw, save) })
    }

    /// The tensor names saved in it so far.
    pub fn tensor_names(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_collection_tensor_names(self.raw, o) })
    }
}
