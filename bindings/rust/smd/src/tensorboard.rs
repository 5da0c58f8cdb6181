//! Writing TensorBoard logs (scalars and histograms) the way smdebug exports them.
use crate::error::{check, Result};
use crate::hook::{create, owned_handle, path_str};
use crate::s3::{S3Settings, StorageOptions};
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
    /// A writer of the log folder `dir` (created with its first file), or of `s3://bucket/prefix`
    /// reached through the AWS configuration chain (each event file becomes an object when the
    /// writer is closed). Nothing is written until the first record.
    pub fn new(dir: impl AsRef<Path>) -> Result<TensorBoardWriter> {
        Self::create(dir.as_ref(), None)
    }

    /// A writer of `dir` as [`TensorBoardWriter::new`], reaching an `s3://bucket/prefix` folder
    /// with `settings` (local folders ignore them).
    pub fn with_s3(dir: impl AsRef<Path>, settings: &S3Settings) -> Result<TensorBoardWriter> {
        Self::create(dir.as_ref(), Some(settings))
    }

    fn create(dir: &Path, settings: Option<&S3Settings>) -> Result<TensorBoardWriter> {
        let c = cstring(path_str(dir, "tensorboard dir")?, "tensorboard dir")?;
        let storage = settings.map(S3Settings::storage).transpose()?;
        let sp = StorageOptions::ptr_or_null(&storage);
        // SAFETY: c and storage outlive the call; the writer copies the storage options.
        Ok(TensorBoardWriter { raw: create(|o| unsafe { sys::smd_tensorboard_writer_create(c.as_ptr(), sp, o) })? })
    }

    /// A scalar summary tagged `tag` at `step` (>= 0) of `mode`.
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
