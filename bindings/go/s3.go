package smd

/*
#include "smd/smd.h"
*/
import "C"

import (
	"math"
	"runtime"
	"time"
)

// S3Settings say how to reach an s3://bucket/prefix folder (docs/s3.md). An empty field is left
// to the AWS configuration chain: AWS_* environment variables, then ~/.aws/credentials and
// ~/.aws/config, then container or instance credentials. A field set here wins over the chain.
// The same settings serve hook options (HookOptions.SetS3), trial options (TrialOptions.S3) and
// the TensorBoard writer (NewTensorBoardWriter); local paths ignore them.
type S3Settings struct {
	// Endpoint is "http[s]://host[:port]" (e.g. a MinIO or Ceph server); it implies path-style
	// addressing unless AddressingStyle is set.
	Endpoint string
	Region   string
	// Profile names a profile of ~/.aws/credentials and ~/.aws/config.
	Profile string
	// AddressingStyle is "path" or "virtual".
	AddressingStyle string
	// CABundle is a PEM file that the server's TLS certificate is checked against.
	CABundle string
	// AccessKeyID and SecretAccessKey are static credentials: both or neither. SessionToken goes
	// with temporary ones. No error message ever contains the secret key or the token.
	AccessKeyID, SecretAccessKey, SessionToken string

	// The retry policy (docs/s3.md, "Retry policy"); 0 keeps each default, a negative value is
	// an error. MaxAttempts is the attempts per request (default 5, or AWS_MAX_ATTEMPTS, or the
	// profile's max_attempts).
	MaxAttempts int
	// Backoff is the base of the jittered exponential backoff between attempts (default 50ms);
	// it is counted in whole milliseconds, a positive value below one rounds up to 1ms.
	Backoff time.Duration
	// StallTimeout is how long a transfer may move less than a byte a second before it is
	// abandoned and retried (default 30s); whole milliseconds as Backoff.
	StallTimeout time.Duration
}

// optionalCStr is nil for "" (the C setters' "unset"), else the string in C form.
func optionalCStr(what, s string) (*C.char, error) {
	if s == "" {
		return nil, nil
	}
	return cstr(what, s)
}

// millis is d in whole milliseconds for the C setter, rounded away from zero: a nonzero d never
// becomes 0 (the default).
func millis(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d%time.Millisecond > 0 {
		ms++
	} else if d%time.Millisecond < 0 {
		ms--
	}
	return ms
}

// storage builds the C storage options object these settings describe (smd/storage.h). The
// caller frees it with C.smd_storage_options_free; nil settings give nil (C NULL: everything from
// the AWS configuration chain).
func (s *S3Settings) storage() (*C.smd_storage_options, error) {
	if s == nil {
		return nil, nil
	}
	var p *C.smd_storage_options
	if err := takeErr(C.smd_storage_options_create(&p)); err != nil {
		return nil, err
	}
	if err := s.fill(p); err != nil {
		C.smd_storage_options_free(p)
		return nil, err
	}
	return p, nil
}

func (s *S3Settings) fill(p *C.smd_storage_options) error {
	for _, f := range []struct {
		what, value string
		set         func(*C.smd_storage_options, *C.char) *C.smd_error
	}{
		{"S3 endpoint", s.Endpoint, func(p *C.smd_storage_options, v *C.char) *C.smd_error {
			return C.smd_storage_options_set_s3_endpoint(p, v)
		}},
		{"S3 region", s.Region, func(p *C.smd_storage_options, v *C.char) *C.smd_error {
			return C.smd_storage_options_set_s3_region(p, v)
		}},
		{"S3 profile", s.Profile, func(p *C.smd_storage_options, v *C.char) *C.smd_error {
			return C.smd_storage_options_set_s3_profile(p, v)
		}},
		{"S3 addressing style", s.AddressingStyle, func(p *C.smd_storage_options, v *C.char) *C.smd_error {
			return C.smd_storage_options_set_s3_addressing_style(p, v)
		}},
		{"S3 CA bundle", s.CABundle, func(p *C.smd_storage_options, v *C.char) *C.smd_error {
			return C.smd_storage_options_set_s3_ca_bundle(p, v)
		}},
	} {
		if f.value == "" {
			continue // a new object has nothing set
		}
		cs, err := cstr(f.what, f.value)
		if err != nil {
			return err
		}
		if err := takeErr(f.set(p, cs)); err != nil {
			return err
		}
	}
	// The keys' values never appear in an error message.
	id, err := optionalCStr("S3 access key id", s.AccessKeyID)
	if err != nil {
		return err
	}
	secret, err := optionalCStr("S3 secret access key", s.SecretAccessKey)
	if err != nil {
		return argErr("the S3 secret access key contains a NUL byte")
	}
	token, err := optionalCStr("S3 session token", s.SessionToken)
	if err != nil {
		return argErr("the S3 session token contains a NUL byte")
	}
	if id != nil || secret != nil || token != nil {
		if err := takeErr(C.smd_storage_options_set_s3_credentials(p, id, secret, token)); err != nil {
			return err
		}
	}
	if s.MaxAttempts != 0 || s.Backoff != 0 || s.StallTimeout != 0 {
		backoff := millis(s.Backoff)
		if s.MaxAttempts > math.MaxInt32 || backoff > math.MaxInt32 {
			return argErr("S3 retries: MaxAttempts %d or Backoff %v is too large", s.MaxAttempts, s.Backoff)
		}
		// A negative value (clamped into int32) is the C library's error to report.
		attempts := max(s.MaxAttempts, math.MinInt32)
		backoff = max(backoff, math.MinInt32)
		if err := takeErr(C.smd_storage_options_set_s3_retries(p, C.int32_t(attempts), C.int32_t(backoff),
			C.int64_t(millis(s.StallTimeout)))); err != nil {
			return err
		}
	}
	return nil
}

// withStorage calls f with the C storage options of s (NULL for nil s) and frees them after: the
// C functions that take them copy them.
func withStorage(s *S3Settings, f func(*C.smd_storage_options) *C.smd_error) error {
	p, err := s.storage()
	if err != nil {
		return err
	}
	defer C.smd_storage_options_free(p)
	return takeErr(f(p))
}

// SetS3 sets how the hook reaches an s3:// out_dir or TensorBoard folder (local paths ignore it),
// replacing any settings given before; S3Settings{} goes back to the AWS configuration chain.
func (o *HookOptions) SetS3(s S3Settings) error {
	defer runtime.KeepAlive(o)
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return withStorage(&s, func(sp *C.smd_storage_options) *C.smd_error { return C.smd_hook_options_set_storage(p, sp) })
}

// SetFsync makes the hook fsync every file before its rename and its folder after it, so that a
// step visible in the index survives a power loss, not only a crash of the process (default
// off, as in smdebug; docs/durability.md).
func (o *HookOptions) SetFsync(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error { return C.smd_hook_options_set_fsync(p, b) })
}
