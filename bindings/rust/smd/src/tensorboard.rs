//! Writing TensorBoard logs (scalars and histograms) the way smdebug exports them.
use crate::error::{check, Result};
use crate::hook::{create, owned_handle, path_str};
use crate::types::{Element, Mode};
use crate::util::cstring;
use smd_sys as sys;
use std::path::Path;

owned_handle!(
    /// A writer of a TensorBoard log folder. Dropping it closes it (errors dropped).
    TensorBoardWriter, sys::smd_tensorboard_writer, sys::smd_tensorboard_writer_free
);
// SAFETY: the writer is used by one thread at a time (all methods take &mut self).
unsafe impl Send for TensorBoardWriter {}

impl TensorBoardWriter {
    /// A writer of the log folder `dir`.
    pub fn new(dir: impl AsRef<Path>) -> Result<TensorBoardWriter> {
        let c = cstring(path_str(dir.as_ref(), "tensorboard dir")?, "tensorboard dir")?;
        Ok(TensorBoardWriter { raw: create(|o| unsafe { sys::smd_tensorboard_writer_create(c.as_ptr(), o) })? })
    }

    /// A scalar summary tagged `tag` at `step` of `mode`.
    pub fn add_scalar(&mut self, step: i64, mode: Mode, wall_time: f64, tag: &str, value: f64) -> Result<()> {
        let t = cstring(tag, "tag")?;
        check(unsafe { sys::smd_tensorboard_writer_add_scalar(self.raw, step, mode.raw(), wall_time, t.as_ptr(), value) })
    }

    /// A histogram summary of `data`; returns whether one was written (empty data or data without
    /// a finite value writes none).
    pub fn add_histogram<T: Element>(&mut self, step: i64, mode: Mode, wall_time: f64, tag: &str, data: &[T]) -> Result<bool> {
        let t = cstring(tag, "tag")?;
        let mut written = false;
        check(unsafe {
            sys::smd_tensorboard_writer_add_histogram(self.raw, step, mode.raw(), wall_time, t.as_ptr(), T::DTYPE.raw(), data.as_ptr().cast(), std::mem::size_of_val(data), &mut written)
        })?;
        Ok(written)
    }

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> Result<()> {
        check(unsafe { sys::smd_tensorboard_writer_flush(self.raw) })
    }

    /// Completes and closes every file; returns the first error met since creation.
    pub fn close(&mut self) -> Result<()> {
        check(unsafe { sys::smd_tensorboard_writer_close(self.raw) })
    }
}
