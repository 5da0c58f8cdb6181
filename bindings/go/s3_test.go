package smd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// s3Server is the local S3 server scripts/test_go.sh starts (scripts/s3-server.sh), given by the
// SMD_S3_* variables. Without them the S3 round trip cannot run: it fails when
// SMD_GO_REQUIRE_S3=1 (as test_go.sh sets), else it is skipped.
func s3Server(t *testing.T) (S3Settings, string) {
	t.Helper()
	endpoint := os.Getenv("SMD_S3_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("SMD_GO_REQUIRE_S3") == "1" {
			t.Fatal("SMD_GO_REQUIRE_S3=1 but no SMD_S3_ENDPOINT: the S3 server did not start")
		}
		t.Skip("no local S3 server (run scripts/test_go.sh, which starts one)")
	}
	// The settings below are the only way the binding learns how to reach the server: nothing
	// comes from the AWS_* variables.
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s := S3Settings{
		Endpoint:        endpoint,
		Region:          os.Getenv("SMD_S3_REGION"),
		AccessKeyID:     os.Getenv("SMD_S3_ACCESS_KEY"),
		SecretAccessKey: os.Getenv("SMD_S3_SECRET_KEY"),
	}
	uri := fmt.Sprintf("s3://%s/go-%d-%s", os.Getenv("SMD_S3_BUCKET"), time.Now().UnixNano(), t.Name())
	return s, uri
}

func TestS3HookAndTrialWithSettings(t *testing.T) {
	s, uri := s3Server(t)
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	must(t, opts.SetS3(s))
	must(t, opts.SetFsync(true)) // ignored by S3 storage, accepted by the options
	must(t, opts.AddIncludeRegex("^w$"))
	sc, err := NewSaveConfig()
	must(t, err)
	defer sc.Close()
	must(t, sc.Set(ModeAll, 1, 0, -1))
	must(t, opts.SetSaveConfig(sc))
	h, err := NewHook(uri, opts)
	must(t, err)
	must(t, h.SetMode(ModeTrain))
	for step := 0; step < 3; step++ {
		must(t, h.BeginStep())
		data := []float32{float32(step), float32(step) + 0.5}
		must(t, Save(h, "w", []int64{2}, data))
	}
	must(t, h.Close())

	tr, err := OpenTrial(uri, &TrialOptions{S3: &s, CollectionWait: time.Second})
	must(t, err)
	defer tr.Close()
	ended, err := tr.HasEnded()
	must(t, err)
	if !ended {
		t.Fatal("the S3 trial has not ended after the hook's Close")
	}
	steps, err := tr.Steps(ModeTrain, false)
	must(t, err)
	if fmt.Sprint(steps) != "[0 1 2]" {
		t.Fatalf("the S3 trial's TRAIN steps are %v, want [0 1 2]", steps)
	}
	checkValue(t, tr, "w", 2, []float32{2, 2.5}, []int64{2})

	// Without the settings there are no credentials at all; with a wrong secret the server
	// refuses the signature. Both are authentication errors that never show the secret.
	bad := s
	bad.SecretAccessKey = "wrong-secret-" + s.SecretAccessKey
	_, err = OpenTrial(uri, &TrialOptions{S3: &bad})
	mustCode(t, err, ErrAuth)
	if strings.Contains(err.Error(), bad.SecretAccessKey) || strings.Contains(err.Error(), s.SecretAccessKey) {
		t.Fatalf("the error shows the secret key: %v", err)
	}
	bad = s
	bad.Endpoint = "ftp://127.0.0.1:1"
	_, err = OpenTrial(uri, &TrialOptions{S3: &bad})
	mustCode(t, err, ErrInvalidArgument)
	bad = s
	bad.SecretAccessKey = ""
	_, err = OpenTrial(uri, &TrialOptions{S3: &bad})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArgument {
		t.Fatalf("an access key without a secret: %v, want SMD_E_INVALID_ARGUMENT", err)
	}
}

func TestS3SettingsBadInput(t *testing.T) {
	opts, err := NewHookOptions()
	must(t, err)
	defer opts.Close()
	mustCode(t, opts.SetS3(S3Settings{AddressingStyle: "sideways"}), ErrInvalidArgument)
	mustCode(t, opts.SetS3(S3Settings{Endpoint: "127.0.0.1:9000"}), ErrInvalidArgument)
	mustCode(t, opts.SetS3(S3Settings{SessionToken: "tok"}), ErrInvalidArgument)
	err = opts.SetS3(S3Settings{AccessKeyID: "id", SecretAccessKey: "zzq\x00qqz"})
	mustCode(t, err, ErrInvalidArgument)
	if strings.Contains(err.Error(), "zzq") || strings.Contains(err.Error(), "qqz") {
		t.Fatalf("the error shows the secret key: %v", err)
	}
	must(t, opts.SetS3(S3Settings{Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", AddressingStyle: "virtual",
		MaxAttempts: 3, Backoff: 100 * time.Millisecond, StallTimeout: time.Minute}))
	must(t, opts.SetS3(S3Settings{})) // back to the AWS configuration chain
	opts.Close()
	mustCode(t, opts.SetS3(S3Settings{}), ErrClosed)
	mustCode(t, opts.SetFsync(true), ErrClosed)
}

// badS3Settings are refused by the storage options object the binding builds from them, whichever
// part of smd takes it.
var badS3Settings = []struct {
	name string
	s    S3Settings
}{
	{"ftp endpoint", S3Settings{Endpoint: "ftp://x"}},
	{"sideways addressing", S3Settings{AddressingStyle: "sideways"}},
	{"key id without secret", S3Settings{AccessKeyID: "id"}},
	{"secret without key id", S3Settings{SecretAccessKey: "secret"}},
	{"token without keys", S3Settings{SessionToken: "tok"}},
	{"negative attempts", S3Settings{MaxAttempts: -1}},
	{"negative backoff", S3Settings{Backoff: -time.Millisecond}},
	{"negative stall timeout", S3Settings{StallTimeout: -time.Microsecond}},
	{"attempts beyond int32", S3Settings{MaxAttempts: 1 << 40}},
	{"backoff beyond int32 ms", S3Settings{Backoff: 1 << 62}},
}

func TestS3SettingsRejectedEverywhere(t *testing.T) {
	dir := t.TempDir()
	for _, c := range badS3Settings {
		t.Run(c.name, func(t *testing.T) {
			opts, err := NewHookOptions()
			must(t, err)
			defer opts.Close()
			mustCode(t, opts.SetS3(c.s), ErrInvalidArgument)
			s := c.s
			_, err = OpenTrial(dir, &TrialOptions{S3: &s})
			mustCode(t, err, ErrInvalidArgument)
			_, err = NewTensorBoardWriter(filepath.Join(dir, "tb"), c.s)
			mustCode(t, err, ErrInvalidArgument)
		})
	}
}

func TestTensorBoardWriterTakesS3Settings(t *testing.T) {
	// A local folder ignores the settings, which are still checked.
	dir := t.TempDir()
	w, err := NewTensorBoardWriter(dir, S3Settings{Endpoint: "http://127.0.0.1:1", Region: "eu-west-1",
		AccessKeyID: "id", SecretAccessKey: "secret", MaxAttempts: 2, Backoff: time.Microsecond, StallTimeout: time.Second})
	must(t, err)
	must(t, w.AddScalar(0, ModeTrain, time.Time{}, "loss", 0.5))
	must(t, w.Close())
	if files, _ := filepath.Glob(filepath.Join(dir, "TRAIN", "*.tfevents")); len(files) != 1 {
		t.Fatalf("event files %v, want one", files)
	}
	_, err = NewTensorBoardWriter(dir, S3Settings{}, S3Settings{})
	mustCode(t, err, ErrInvalidArgument)
}

func TestS3TensorBoardWriterWithSettings(t *testing.T) {
	s, uri := s3Server(t)
	w, err := NewTensorBoardWriter(uri+"/tb", s)
	must(t, err)
	must(t, w.AddScalar(0, ModeTrain, time.Time{}, "loss", 0.5))
	must(t, w.Close())

	// The settings are what reaches the server: a wrong secret is refused by the first request
	// (when the first record is written, or at the latest when the event file is uploaded at
	// Close), an authentication error that does not show the secret.
	bad := s
	bad.SecretAccessKey = "wrong-secret-" + s.SecretAccessKey
	bad.MaxAttempts = 1
	w, err = NewTensorBoardWriter(uri+"/tb-bad", bad)
	must(t, err)
	err = w.AddScalar(0, ModeTrain, time.Time{}, "loss", 0.5)
	if closeErr := w.Close(); err == nil {
		err = closeErr
	}
	mustCode(t, err, ErrAuth)
	if strings.Contains(err.Error(), bad.SecretAccessKey) {
		t.Fatalf("the error shows the secret key: %v", err)
	}
}
