package ai.smd;

/**
 * How smd reaches storage: the S3 settings of an {@code s3://bucket/prefix} out_dir, trial or
 * TensorBoard folder. One object serves every part of smd that opens storage:
 * {@link HookOptions#storage(StorageOptions)}, {@link TrialOptions#storage(StorageOptions)},
 * {@link TensorBoardWriter#create(String, StorageOptions)} and
 * {@link Smd#s3UploadsInProgress(String, StorageOptions, boolean)}; each copies the settings, so
 * one object may serve many and be closed as soon as they have taken it. Local paths ignore it.
 *
 * <p>A setting left unset comes from the AWS configuration chain (AWS_* environment variables,
 * then ~/.aws/credentials and ~/.aws/config, then container or instance credentials); one set here
 * wins. Every setter returns this; null or "" unsets a string setting. A bad value throws
 * {@link SmdException} with code {@link SmdException#INVALID_ARGUMENT}. Not thread-safe.
 */
public final class StorageOptions extends NativeObject<smd_storage_options> implements AutoCloseable {
  /** Nothing set: everything from the AWS configuration chain and smd's defaults. */
  public StorageOptions() throws SmdException {
    this(create());
  }

  private StorageOptions(long ptr) {
    super(new smd_storage_options(ptr, false), ptr, SmdNativeJNI::delete_smd_storage_options);
  }

  private static long create() throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_storage_options_create(out);
    return out[0];
  }

  /**
   * The S3 endpoint "http[s]://host[:port]" (e.g. a MinIO or Ceph server); it implies path-style
   * addressing unless {@link #s3AddressingStyle(String)} says otherwise.
   */
  public StorageOptions s3Endpoint(String endpoint) throws SmdException {
    SmdNative.smd_storage_options_set_s3_endpoint(p(), endpoint);
    return this;
  }

  public StorageOptions s3Region(String region) throws SmdException {
    SmdNative.smd_storage_options_set_s3_region(p(), region);
    return this;
  }

  /** A profile of ~/.aws/credentials and ~/.aws/config (as AWS_PROFILE). */
  public StorageOptions s3Profile(String profile) throws SmdException {
    SmdNative.smd_storage_options_set_s3_profile(p(), profile);
    return this;
  }

  /** "path" or "virtual". */
  public StorageOptions s3AddressingStyle(String style) throws SmdException {
    SmdNative.smd_storage_options_set_s3_addressing_style(p(), style);
    return this;
  }

  /** A PEM file of the certificate authorities that TLS certificates are checked against. */
  public StorageOptions s3CaBundle(String pemPath) throws SmdException {
    SmdNative.smd_storage_options_set_s3_ca_bundle(p(), pemPath);
    return this;
  }

  /**
   * Static credentials (never echoed in any message): both keys, or both null to go back to the
   * configuration chain; sessionToken may be null (permanent keys).
   */
  public StorageOptions s3Credentials(String accessKeyId, String secretAccessKey, String sessionToken)
      throws SmdException {
    SmdNative.smd_storage_options_set_s3_credentials(p(), accessKeyId, secretAccessKey, sessionToken);
    return this;
  }

  /**
   * Retry tuning; 0 keeps a default, a negative value is refused. maxAttempts: attempts per request
   * (default 5, or AWS_MAX_ATTEMPTS, or the profile's max_attempts); backoffMs: the base of the
   * jittered exponential backoff between attempts (default 50); stallTimeoutMs: how long a transfer
   * may move less than a byte a second before it is abandoned and retried (default 30000).
   */
  public StorageOptions s3Retries(int maxAttempts, int backoffMs, long stallTimeoutMs) throws SmdException {
    SmdNative.smd_storage_options_set_s3_retries(p(), maxAttempts, backoffMs, stallTimeoutMs);
    return this;
  }

  @Override
  public void close() {
    release();
  }
}
