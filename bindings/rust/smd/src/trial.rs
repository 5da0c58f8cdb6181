//! Reading trials: the trial, its tensors and their values.
use crate::error::{check, Error, ErrorKind, Result};
use crate::hook::{create, owned_handle, path_str, SaveConfig};
use crate::types::{DType, Element, Mode};
use crate::util::{borrowed_str, cstring, opt_cstring, opt_ptr, owned_string, strarray, take_array};
use smd_sys as sys;
use std::ffi::c_char;
use std::marker::PhantomData;
use std::path::Path;
use std::ptr;

owned_handle!(
    /// Options of [`Trial::open`]. A plain value.
    TrialOptions, sys::smd_trial_options, sys::smd_trial_options_free
);
// SAFETY: plain value.
unsafe impl Send for TrialOptions {}

impl TrialOptions {
    /// Every default: all steps, automatic refresh, no wait for collections, a 64 MiB cache.
    pub fn new() -> Result<TrialOptions> {
        Ok(TrialOptions { raw: create(|o| unsafe { sys::smd_trial_options_create(o) })? })
    }

    /// How to reach an `s3://bucket/prefix` trial (local paths ignore it), replacing any
    /// settings given before; `S3Settings::default()` goes back to the AWS configuration chain.
    pub fn set_s3(&mut self, settings: &crate::S3Settings) -> Result<&mut Self> {
        let storage = settings.storage()?;
        // SAFETY: both objects are live; the trial options copy the storage options.
        check(unsafe { sys::smd_trial_options_set_storage(self.raw, storage.as_ptr()) })?;
        Ok(self)
    }

    /// Load only global steps `begin <= step < end` (-1: no bound).
    pub fn set_range_steps(&mut self, begin: i64, end: i64) -> Result<&mut Self> {
        check(unsafe { sys::smd_trial_options_set_range_steps(self.raw, begin, end) })?;
        Ok(self)
    }

    /// Whether queries refresh the trial by themselves when they need newer data (default
    /// true). Fixed for the trial's life; [`Trial::refresh_scope`] overrides it on one thread
    /// for a while.
    pub fn set_auto_refresh(&mut self, on: bool) -> Result<&mut Self> {
        check(unsafe { sys::smd_trial_options_set_auto_refresh(self.raw, on) })?;
        Ok(self)
    }

    /// How long opening waits for the collections file of a running job.
    pub fn set_collection_wait_ms(&mut self, wait_ms: i64) -> Result<&mut Self> {
        check(unsafe { sys::smd_trial_options_set_collection_wait_ms(self.raw, wait_ms) })?;
        Ok(self)
    }

    /// Bytes the value cache keeps (0: no cache).
    pub fn set_cache_bytes(&mut self, bytes: usize) -> Result<&mut Self> {
        check(unsafe { sys::smd_trial_options_set_cache_bytes(self.raw, bytes) })?;
        Ok(self)
    }
}

owned_handle!(
    /// Which tensor names [`Trial::tensor_names`] returns. A plain value.
    TensorFilter, sys::smd_tensor_filter, sys::smd_tensor_filter_free
);
// SAFETY: plain value.
unsafe impl Send for TensorFilter {}

impl TensorFilter {
    /// A filter that lets every tensor through.
    pub fn new() -> Result<TensorFilter> {
        Ok(TensorFilter { raw: create(|o| unsafe { sys::smd_tensor_filter_create(o) })? })
    }

    /// Only tensors saved at this step.
    pub fn set_step(&mut self, step: i64) -> Result<&mut Self> {
        check(unsafe { sys::smd_tensor_filter_set_step(self.raw, step) })?;
        Ok(self)
    }

    /// The mode the step is counted in.
    pub fn set_mode(&mut self, mode: Mode) -> Result<&mut Self> {
        check(unsafe { sys::smd_tensor_filter_set_mode(self.raw, mode.raw()) })?;
        Ok(self)
    }

    /// Only names matching this regex (any of those added).
    pub fn add_regex(&mut self, regex: &str) -> Result<&mut Self> {
        let c = cstring(regex, "regex")?;
        check(unsafe { sys::smd_tensor_filter_add_include_regex(self.raw, c.as_ptr()) })?;
        Ok(self)
    }

    /// Only tensors of this collection.
    pub fn set_collection(&mut self, collection: &str) -> Result<&mut Self> {
        let c = cstring(collection, "collection name")?;
        check(unsafe { sys::smd_tensor_filter_set_collection(self.raw, c.as_ptr()) })?;
        Ok(self)
    }
}

/// Whether a step has been written (`Trial::has_passed_step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    /// The step was not saved (or the job ended before it).
    Unavailable,
    /// The step is there.
    Available,
    /// The job is running and has not reached it yet.
    NotYetAvailable,
}

owned_handle!(
    /// An smdebug trial (a folder written by a hook). `Send + Sync`: every function may be called
    /// concurrently. Its settings are fixed when it opens; whether queries refresh by themselves
    /// can be overridden per thread with [`Trial::refresh_scope`].
    Trial, sys::smd_trial, sys::smd_trial_free
);
// SAFETY: docs/threading.md: smd_trial may be used concurrently from any number of threads.
unsafe impl Send for Trial {}
unsafe impl Sync for Trial {}

impl Trial {
    /// Opens the trial at `path`.
    pub fn open(path: impl AsRef<Path>, options: Option<&TrialOptions>) -> Result<Trial> {
        let c = cstring(path_str(path.as_ref(), "trial path")?, "trial path")?;
        let o = options.map_or(ptr::null(), |o| o.raw as *const _);
        Ok(Trial { raw: create(|out| unsafe { sys::smd_trial_open(c.as_ptr(), o, out) })? })
    }

    /// The trial's path.
    pub fn path(&self) -> &str {
        unsafe { borrowed_str(sys::smd_trial_path(self.raw)) }
    }

    /// Loads what was written since the last refresh.
    pub fn refresh(&self) -> Result<()> {
        check(unsafe { sys::smd_trial_refresh(self.raw) })
    }

    /// Whether queries of this trial refresh by themselves on the calling thread: the innermost
    /// [`RefreshScope`] of this trial alive on this thread, else the setting the trial was
    /// opened with ([`TrialOptions::set_auto_refresh`]).
    pub fn auto_refresh(&self) -> bool {
        unsafe { sys::smd_trial_auto_refresh(self.raw) }
    }

    /// Starts a refresh scope on the calling thread: smdebug's `no_refresh` (`on` false) or
    /// `refresh` (`on` true) block. Until the returned guard is dropped, queries of this trial
    /// made on this thread (through any handle of it, its [`Tensor`]s included) refresh by
    /// themselves if `on` and never if not, whatever the trial was opened with. Other threads
    /// are not affected. Scopes nest: the innermost wins, and dropping it brings back the
    /// enclosing one.
    ///
    /// ```no_run
    /// # fn main() -> smd::Result<()> {
    /// let trial = smd::Trial::open("/tmp/run", None)?;
    /// {
    ///     let _frozen = trial.refresh_scope(false)?;
    ///     // Every query here sees the same steps, however far the job has got meanwhile.
    ///     let steps = trial.steps(smd::Mode::Global, true)?;
    ///     assert!(!trial.auto_refresh());
    ///     println!("{steps:?}");
    /// }
    /// assert!(trial.auto_refresh()); // the trial was opened with automatic refresh
    /// # Ok(()) }
    /// ```
    pub fn refresh_scope(&self, on: bool) -> Result<RefreshScope<'_>> {
        let raw = create(|o| unsafe { sys::smd_trial_refresh_scope_create(self.raw, on, o) })?;
        Ok(RefreshScope { raw, _trial: PhantomData, _this_thread: PhantomData })
    }

    /// Warnings met while loading (skipped files, ...).
    pub fn warnings(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_trial_warnings(self.raw, o) })
    }

    /// Whether the job has ended.
    pub fn has_ended(&self) -> Result<bool> {
        let mut out = false;
        check(unsafe { sys::smd_trial_has_ended(self.raw, &mut out) })?;
        Ok(out)
    }

    /// The number of workers.
    pub fn num_workers(&self) -> i64 {
        unsafe { sys::smd_trial_num_workers(self.raw) }
    }

    /// Whether the trial has seen the end of the job and loaded every step written before it, so
    /// that no step can appear any more (smdebug's `trial.loaded_all_steps`): set by the first
    /// refresh (the one `open` makes included) that found `training_job_end.ts` before listing
    /// and could read every index file. It checks nothing itself.
    pub fn loaded_all_steps(&self) -> bool {
        unsafe { sys::smd_trial_loaded_all_steps(self.raw) }
    }

    /// The last global step that every worker has written (-1 before any), as smdebug's
    /// `trial.last_complete_step`.
    pub fn last_complete_step(&self) -> i64 {
        unsafe { sys::smd_trial_last_complete_step(self.raw) }
    }

    /// The index file after which the next refresh lists new ones, relative to the trial
    /// ("index/000000000/000000000070_worker_0.json"); None before any step is complete.
    /// smdebug's `trial.last_index_token` is this joined to the trial's path.
    pub fn index_cursor(&self) -> Result<Option<String>> {
        owned_string(|out| unsafe { sys::smd_trial_index_cursor(self.raw, out) })
    }

    /// The steps of `mode` (global steps for `Mode::Global`), ascending.
    pub fn steps(&self, mode: Mode, show_incomplete: bool) -> Result<Vec<i64>> {
        let (mut p, mut n) = (ptr::null_mut(), 0);
        check(unsafe { sys::smd_trial_steps(self.raw, mode.raw(), show_incomplete, &mut p, &mut n) })?;
        Ok(take_array(p, n))
    }

    /// The modes with saved steps.
    pub fn modes(&self) -> Result<Vec<Mode>> {
        let (mut p, mut n) = (ptr::null_mut(), 0);
        check(unsafe { sys::smd_trial_modes(self.raw, &mut p, &mut n) })?;
        take_array(p, n).into_iter().map(Mode::from_raw).collect()
    }

    /// The mode of a global step.
    pub fn mode(&self, global_step: i64) -> Result<Mode> {
        let mut out = 0;
        check(unsafe { sys::smd_trial_mode(self.raw, global_step, &mut out) })?;
        Mode::from_raw(out)
    }

    /// The mode step of a global step.
    pub fn mode_step(&self, global_step: i64) -> Result<i64> {
        let mut out = 0;
        check(unsafe { sys::smd_trial_mode_step(self.raw, global_step, &mut out) })?;
        Ok(out)
    }

    /// The global step of a mode step.
    pub fn global_step(&self, mode_step: i64, mode: Mode) -> Result<i64> {
        let mut out = 0;
        check(unsafe { sys::smd_trial_global_step(self.raw, mode_step, mode.raw(), &mut out) })?;
        Ok(out)
    }

    /// The workers that wrote the trial.
    pub fn workers(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_trial_workers(self.raw, o) })
    }

    /// Whether a step has been written.
    pub fn has_passed_step(&self, step: i64, mode: Mode) -> Result<StepState> {
        let mut out = 0;
        check(unsafe { sys::smd_trial_has_passed_step(self.raw, step, mode.raw(), &mut out) })?;
        Ok(match out {
            sys::SMD_STEP_AVAILABLE => StepState::Available,
            sys::SMD_STEP_NOT_YET_AVAILABLE => StepState::NotYetAvailable,
            _ => StepState::Unavailable,
        })
    }

    /// Waits until the steps are written (timeout_ms < 0: as long as it takes; 0: check once).
    pub fn wait_for_steps(&self, steps: &[i64], mode: Mode, timeout_ms: i64) -> Result<()> {
        check(unsafe { sys::smd_trial_wait_for_steps(self.raw, steps.as_ptr(), steps.len(), mode.raw(), timeout_ms) })
    }

    /// The tensor names, all or those the filter lets through.
    pub fn tensor_names(&self, filter: Option<&TensorFilter>) -> Result<Vec<String>> {
        let f = filter.map_or(ptr::null(), |f| f.raw as *const _);
        strarray(|o| unsafe { sys::smd_trial_tensor_names(self.raw, f, o) })
    }

    /// Whether the trial has a tensor of that name.
    pub fn has_tensor(&self, name: &str) -> Result<bool> {
        let c = cstring(name, "tensor name")?;
        let mut out = false;
        check(unsafe { sys::smd_trial_has_tensor(self.raw, c.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// A tensor of the trial (it stays valid after the trial is dropped).
    pub fn tensor(&self, name: &str) -> Result<Tensor> {
        let c = cstring(name, "tensor name")?;
        Ok(Tensor { raw: create(|o| unsafe { sys::smd_trial_tensor(self.raw, c.as_ptr(), o) })? })
    }

    /// The collection names of the trial.
    pub fn collection_names(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_trial_collection_names(self.raw, o) })
    }

    /// A collection as the collections file describes it.
    pub fn collection(&self, name: &str) -> Result<CollectionInfo> {
        let c = cstring(name, "collection name")?;
        Ok(CollectionInfo { raw: create(|o| unsafe { sys::smd_trial_collection(self.raw, c.as_ptr(), o) })? })
    }
}

/// A refresh scope of a trial on one thread, made by [`Trial::refresh_scope`]; dropping it ends
/// the scope.
///
/// The C scope belongs to the thread that created it (it overrides the trial's automatic
/// refresh for that thread only, and ended on another thread it would end nothing), so a
/// `RefreshScope` is neither `Send` nor `Sync`: it cannot be moved to, or shared with, another
/// thread.
///
/// ```compile_fail,E0277
/// # fn main() -> smd::Result<()> {
/// let trial = smd::Trial::open("/tmp/run", None)?;
/// let scope = trial.refresh_scope(false)?;
/// std::thread::scope(|s| {
///     s.spawn(move || drop(scope)); // error[E0277]: RefreshScope is not `Send`
/// });
/// # Ok(()) }
/// ```
///
/// ```compile_fail,E0277
/// # fn main() -> smd::Result<()> {
/// let trial = smd::Trial::open("/tmp/run", None)?;
/// let scope = trial.refresh_scope(false)?;
/// std::thread::scope(|s| {
///     s.spawn(|| &scope); // error[E0277]: RefreshScope is not `Sync`
/// });
/// # Ok(()) }
/// ```
///
/// Scopes are best dropped innermost first (one dropped out of order ends just itself). A
/// scope leaked with `std::mem::forget` lasts as long as its thread.
#[must_use = "the scope ends as soon as the guard is dropped"]
pub struct RefreshScope<'a> {
    raw: *mut sys::smd_trial_refresh_scope,
    _trial: PhantomData<&'a Trial>,
    // !Send + !Sync whatever `raw` becomes: the scope is the creating thread's.
    _this_thread: PhantomData<*const ()>,
}

impl RefreshScope<'_> {
    /// The C handle, still owned by this guard (for calls through `smd::sys`).
    pub fn as_raw(&self) -> *mut sys::smd_trial_refresh_scope {
        self.raw
    }
}

impl Drop for RefreshScope<'_> {
    fn drop(&mut self) {
        // SAFETY: we own the scope, and being !Send it is dropped on the thread that made it.
        unsafe { sys::smd_trial_refresh_scope_free(self.raw) }
    }
}

impl std::fmt::Debug for RefreshScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RefreshScope({:p})", self.raw)
    }
}

owned_handle!(
    /// A collection of a trial, read from its collections file. Immutable.
    CollectionInfo, sys::smd_collection_info, sys::smd_collection_info_free
);
// SAFETY: an immutable snapshot.
unsafe impl Send for CollectionInfo {}
unsafe impl Sync for CollectionInfo {}

impl CollectionInfo {
    /// The collection's name.
    pub fn name(&self) -> &str {
        unsafe { borrowed_str(sys::smd_collection_info_name(self.raw)) }
    }
    /// Its include regexes.
    pub fn include_regex(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_collection_info_include_regex(self.raw, o) })
    }
    /// Its tensor names.
    pub fn tensor_names(&self) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_collection_info_tensor_names(self.raw, o) })
    }
    /// Its reductions in smdebug's serialized form.
    pub fn reductions(&self) -> &str {
        unsafe { borrowed_str(sys::smd_collection_info_reductions(self.raw)) }
    }
    /// Whether raw tensors are saved.
    pub fn save_raw_tensor(&self) -> bool {
        unsafe { sys::smd_collection_info_save_raw_tensor(self.raw) }
    }
    /// Whether shapes are saved.
    pub fn save_shape(&self) -> bool {
        unsafe { sys::smd_collection_info_save_shape(self.raw) }
    }
    /// Whether histograms are saved.
    pub fn save_histogram(&self) -> bool {
        unsafe { sys::smd_collection_info_save_histogram(self.raw) }
    }
    /// Its save configuration (smdebug's `Collection.save_config`), `None` when the collections
    /// file gives it none; a mode the file leaves null is unset ([`SaveConfig::settings`]).
    pub fn save_config(&self) -> Result<Option<SaveConfig>> {
        let raw = create(|o| unsafe { sys::smd_collection_info_save_config(self.raw, o) })?;
        Ok((!raw.is_null()).then_some(SaveConfig { raw }))
    }
}

owned_handle!(
    /// One named tensor of a trial. `Send + Sync`.
    Tensor, sys::smd_tensor, sys::smd_tensor_free
);
// SAFETY: docs/threading.md: safe to use from several threads at once.
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

/// The shapes of a tensor at every step (`Tensor::shapes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shapes {
    /// The steps, ascending.
    pub steps: Vec<i64>,
    /// The shape at each step.
    pub shapes: Vec<Vec<i64>>,
}

impl Tensor {
    fn worker(worker: Option<&str>) -> Result<Option<std::ffi::CString>> {
        opt_cstring(worker, "worker")
    }

    /// The tensor's name.
    pub fn name(&self) -> &str {
        unsafe { borrowed_str(sys::smd_tensor_name(self.raw)) }
    }

    /// smdebug's `Tensor.original_name`: the "originalname" of the last shape entry loaded for
    /// the tensor (smdebug's TensorFlow hooks write the variable's own name there, such as
    /// "dense/kernel:0"; the name itself when the entry has none); None when its shape was not
    /// saved (`save_shape`).
    pub fn original_name(&self) -> Result<Option<String>> {
        owned_string(|out| unsafe { sys::smd_tensor_original_name(self.raw, out) })
    }

    /// The steps at which anything of this tensor was saved.
    pub fn steps(&self, mode: Mode, show_incomplete: bool) -> Result<Vec<i64>> {
        let (mut p, mut n) = (ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_steps(self.raw, mode.raw(), show_incomplete, &mut p, &mut n) })?;
        Ok(take_array(p, n))
    }

    /// The value saved at a step (`worker` None: the first worker that saved it).
    pub fn value(&self, step: i64, mode: Mode, worker: Option<&str>) -> Result<Value> {
        let w = Self::worker(worker)?;
        Ok(Value { raw: create(|o| unsafe { sys::smd_tensor_value(self.raw, step, mode.raw(), opt_ptr(&w), o) })? })
    }

    /// The values of every complete step of `mode`, with their steps.
    pub fn values(&self, mode: Mode, worker: Option<&str>) -> Result<Vec<(i64, Value)>> {
        let w = Self::worker(worker)?;
        let (mut steps, mut values, mut n) = (ptr::null_mut(), ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_values(self.raw, mode.raw(), opt_ptr(&w), &mut steps, &mut values, &mut n) })?;
        let steps = take_array(steps, n);
        let mut out = Vec::with_capacity(n);
        for (i, s) in steps.into_iter().enumerate() {
            // SAFETY: n values; each takes its own reference before the array is freed.
            let v = unsafe { sys::smd_value_ref(*values.add(i)) };
            out.push((s, Value { raw: v }));
        }
        unsafe { sys::smd_value_array_free(values, n) };
        Ok(out)
    }

    /// The shape saved at a step.
    pub fn shape(&self, step: i64, mode: Mode, worker: Option<&str>) -> Result<Vec<i64>> {
        let w = Self::worker(worker)?;
        let (mut p, mut n) = (ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_shape(self.raw, step, mode.raw(), opt_ptr(&w), &mut p, &mut n) })?;
        Ok(take_array(p, n))
    }

    /// The dtype and shape of the value at a step, without reading the data.
    pub fn value_info(&self, step: i64, mode: Mode, worker: Option<&str>) -> Result<(DType, Vec<i64>)> {
        let w = Self::worker(worker)?;
        let (mut d, mut p, mut n) = (0, ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_value_info(self.raw, step, mode.raw(), opt_ptr(&w), &mut d, &mut p, &mut n) })?;
        let dims = take_array(p, n);
        let dtype = DType::from_raw(d).ok_or_else(|| Error::new(ErrorKind::Internal, format!("unknown dtype {d}")))?;
        Ok((dtype, dims))
    }

    /// The shapes at every complete step of `mode`.
    pub fn shapes(&self, mode: Mode, worker: Option<&str>) -> Result<Shapes> {
        let w = Self::worker(worker)?;
        let (mut s, mut o, mut d, mut n) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_shapes(self.raw, mode.raw(), opt_ptr(&w), &mut s, &mut o, &mut d, &mut n) })?;
        let steps = take_array(s, n);
        let offsets = take_array(o, if o.is_null() { 0 } else { n + 1 });
        let total = offsets.last().copied().unwrap_or(0);
        let dims = take_array(d, total);
        let shapes = offsets.windows(2).map(|w| dims[w[0]..w[1]].to_vec()).collect();
        Ok(Shapes { steps, shapes })
    }

    /// One reduction ("min", "abs_l2_norm", ...) at a step.
    pub fn reduction_value(&self, step: i64, mode: Mode, worker: Option<&str>, reduction: &str) -> Result<Value> {
        let w = Self::worker(worker)?;
        let r = cstring(reduction, "reduction")?;
        Ok(Value {
            raw: create(|o| unsafe { sys::smd_tensor_reduction_value(self.raw, step, mode.raw(), opt_ptr(&w), r.as_ptr(), o) })?,
        })
    }

    /// The reductions saved at a step.
    pub fn reduction_names(&self, step: i64, mode: Mode, worker: Option<&str>) -> Result<Vec<String>> {
        let w = Self::worker(worker)?;
        strarray(|o| unsafe { sys::smd_tensor_reduction_names(self.raw, step, mode.raw(), opt_ptr(&w), o) })
    }

    /// Every reduction saved at a step, with its name.
    pub fn reduction_values(&self, step: i64, mode: Mode, worker: Option<&str>) -> Result<Vec<(String, Value)>> {
        let w = Self::worker(worker)?;
        let mut names = sys::smd_strarray::default();
        let (mut values, mut n) = (ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_reduction_values(self.raw, step, mode.raw(), opt_ptr(&w), &mut names, &mut values, &mut n) })?;
        let names = crate::util::take_strarray(&mut names);
        let mut out = Vec::with_capacity(n);
        for (i, name) in names.into_iter().enumerate().take(n) {
            let v = unsafe { sys::smd_value_ref(*values.add(i)) };
            out.push((name, Value { raw: v }));
        }
        unsafe { sys::smd_value_array_free(values, n) };
        Ok(out)
    }

    /// The workers that saved this tensor at a step.
    pub fn workers(&self, step: i64, mode: Mode) -> Result<Vec<String>> {
        strarray(|o| unsafe { sys::smd_tensor_workers(self.raw, step, mode.raw(), o) })
    }

    /// The last `n` complete steps up to and including `step` (n = 0: all).
    pub fn prev_steps(&self, step: i64, mode: Mode, n: usize) -> Result<Vec<i64>> {
        let (mut p, mut count) = (ptr::null_mut(), 0);
        check(unsafe { sys::smd_tensor_prev_steps(self.raw, step, mode.raw(), n, &mut p, &mut count) })?;
        Ok(take_array(p, count))
    }
}

owned_handle!(
    /// An immutable, reference-counted array: dtype, shape and C-contiguous data. `Send + Sync`;
    /// `clone()` takes another reference (no copy). Outlives the tensor and trial it came from.
    Value, sys::smd_value, sys::smd_value_free
);
// SAFETY: docs/threading.md: immutable, atomic reference count.
unsafe impl Send for Value {}
unsafe impl Sync for Value {}

impl Clone for Value {
    fn clone(&self) -> Value {
        Value { raw: unsafe { sys::smd_value_ref(self.raw) } }
    }
}

impl Value {
    /// The element type.
    pub fn dtype(&self) -> DType {
        DType::from_raw(unsafe { sys::smd_value_dtype(self.raw) }).unwrap_or(DType::UInt8)
    }

    /// The shape, borrowed from the value.
    pub fn shape(&self) -> &[i64] {
        let n = unsafe { sys::smd_value_ndim(self.raw) };
        let p = unsafe { sys::smd_value_shape(self.raw) };
        if n == 0 || p.is_null() {
            &[]
        } else {
            // SAFETY: ndim dimensions owned by the value, which outlives the borrow.
            unsafe { std::slice::from_raw_parts(p, n) }
        }
    }

    /// The number of elements.
    pub fn count(&self) -> usize {
        unsafe { sys::smd_value_count(self.raw) }
    }

    /// The data's size in bytes (0 for strings).
    pub fn nbytes(&self) -> usize {
        unsafe { sys::smd_value_nbytes(self.raw) }
    }

    /// The data as raw little-endian bytes, borrowed from the value (empty for strings).
    pub fn bytes(&self) -> &[u8] {
        let n = self.nbytes();
        let p = unsafe { sys::smd_value_data(self.raw) };
        if n == 0 || p.is_null() {
            &[]
        } else {
            // SAFETY: nbytes bytes owned by the immutable value.
            unsafe { std::slice::from_raw_parts(p.cast(), n) }
        }
    }

    /// The data as `&[T]` without a copy; `InvalidArgument` when `T` is not the value's dtype.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        if unsafe { sys::smd_value_dtype(self.raw) } != T::DTYPE.raw() {
            return Err(Error::invalid(format!(
                "value has dtype {}, not {}",
                self.dtype().name(),
                T::DTYPE.name()
            )));
        }
        let n = self.count();
        let p = unsafe { sys::smd_value_data(self.raw) };
        if n == 0 || p.is_null() {
            return Ok(&[]);
        }
        if (p as usize) % std::mem::align_of::<T>() != 0 {
            return Err(Error::new(ErrorKind::Unsupported, "value data is not aligned for the element type"));
        }
        if T::DTYPE == DType::Bool {
            // A Rust bool must be 0 or 1: check rather than trust the bytes read from a file.
            // SAFETY: n bytes owned by the immutable value.
            let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
            if let Some(i) = bytes.iter().position(|b| *b > 1) {
                return Err(Error::new(ErrorKind::Corrupt, format!("bool element {i} is {}, not 0 or 1", bytes[i])));
            }
        }
        // SAFETY: count elements of T's dtype, aligned, owned by the immutable value, which
        // outlives the borrow; bool bytes were checked above.
        Ok(unsafe { std::slice::from_raw_parts(p.cast(), n) })
    }

    /// String `i` of a string value, borrowed.
    pub fn string(&self, i: usize) -> Result<&str> {
        let (mut p, mut len): (*const c_char, usize) = (ptr::null(), 0);
        check(unsafe { sys::smd_value_string(self.raw, i, &mut p, &mut len) })?;
        if len == 0 {
            return Ok("");
        }
        // SAFETY: len bytes owned by the value.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        std::str::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::Corrupt, format!("string {i} is not UTF-8")))
    }

    /// Every string of a string value.
    pub fn strings(&self) -> Result<Vec<&str>> {
        (0..self.count()).map(|i| self.string(i)).collect()
    }

    /// Element `i` converted to f64 (any numeric dtype).
    pub fn get_f64(&self, i: usize) -> Result<f64> {
        let mut out = 0.0;
        check(unsafe { sys::smd_value_double_at(self.raw, i, &mut out) })?;
        Ok(out)
    }

    /// Exports the value to DLPack without a copy. The caller must call the returned tensor's
    /// deleter exactly once.
    pub fn to_dlpack(&self) -> Result<*mut sys::DLManagedTensorVersioned> {
        create(|o| unsafe { sys::smd_value_to_dlpack(self.raw, o) })
    }
}
