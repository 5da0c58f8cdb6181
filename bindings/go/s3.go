package smd

/*
#include "smd/smd.h"
*/
import "C"

// S3Settings say how to reach an s3://bucket/prefix folder (docs/s3.md). An empty field is left
// to the AWS configuration chain: AWS_* environment variables, then ~/.aws/credentials and
// ~/.aws/config, then container or instance credentials. A field set here wins over the chain.
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
}

// s3Setters are one options object's C setters (a hook's or a trial's).
type s3Setters struct {
	endpoint, region, profile, style, caBundle func(*C.char) *C.smd_error
	credentials                                func(id, secret, token *C.char) *C.smd_error
}

// optionalCStr is nil for "" (the C setters' "unset"), else the string in C form.
func optionalCStr(what, s string) (*C.char, error) {
	if s == "" {
		return nil, nil
	}
	return cstr(what, s)
}

func (s *S3Settings) apply(set s3Setters) error {
	for _, f := range []struct {
		what, value string
		set         func(*C.char) *C.smd_error
	}{
		{"S3 endpoint", s.Endpoint, set.endpoint},
		{"S3 region", s.Region, set.region},
		{"S3 profile", s.Profile, set.profile},
		{"S3 addressing style", s.AddressingStyle, set.style},
		{"S3 CA bundle", s.CABundle, set.caBundle},
	} {
		cs, err := optionalCStr(f.what, f.value)
		if err != nil {
			return err
		}
		if err := takeErr(f.set(cs)); err != nil {
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
	if id == nil && secret == nil && token == nil {
		return nil
	}
	return takeErr(set.credentials(id, secret, token))
}

// SetS3 sets how the hook reaches an s3:// out_dir or TensorBoard folder (local paths ignore it).
func (o *HookOptions) SetS3(s S3Settings) error {
	p, err := o.ptr()
	if err != nil {
		return err
	}
	return s.apply(s3Setters{
		endpoint: func(v *C.char) *C.smd_error { return C.smd_hook_options_set_s3_endpoint(p, v) },
		region:   func(v *C.char) *C.smd_error { return C.smd_hook_options_set_s3_region(p, v) },
		profile:  func(v *C.char) *C.smd_error { return C.smd_hook_options_set_s3_profile(p, v) },
		style:    func(v *C.char) *C.smd_error { return C.smd_hook_options_set_s3_addressing_style(p, v) },
		caBundle: func(v *C.char) *C.smd_error { return C.smd_hook_options_set_s3_ca_bundle(p, v) },
		credentials: func(id, secret, token *C.char) *C.smd_error {
			return C.smd_hook_options_set_s3_credentials(p, id, secret, token)
		},
	})
}

// SetFsync makes the hook fsync every file before its rename and its folder after it, so that a
// step visible in the index survives a power loss, not only a crash of the process (default
// off, as in smdebug; docs/durability.md).
func (o *HookOptions) SetFsync(on bool) error {
	return o.flag(on, func(p *C.smd_hook_options, b C.bool) *C.smd_error { return C.smd_hook_options_set_fsync(p, b) })
}

func trialS3Setters(p *C.smd_trial_options) s3Setters {
	return s3Setters{
		endpoint: func(v *C.char) *C.smd_error { return C.smd_trial_options_set_s3_endpoint(p, v) },
		region:   func(v *C.char) *C.smd_error { return C.smd_trial_options_set_s3_region(p, v) },
		profile:  func(v *C.char) *C.smd_error { return C.smd_trial_options_set_s3_profile(p, v) },
		style:    func(v *C.char) *C.smd_error { return C.smd_trial_options_set_s3_addressing_style(p, v) },
		caBundle: func(v *C.char) *C.smd_error { return C.smd_trial_options_set_s3_ca_bundle(p, v) },
		credentials: func(id, secret, token *C.char) *C.smd_error {
			return C.smd_trial_options_set_s3_credentials(p, id, secret, token)
		},
	}
}
