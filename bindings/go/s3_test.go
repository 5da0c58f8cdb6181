package smd

import (
	"errors"
	"fmt"
	"os"
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
	must(t, opts.SetS3(S3Settings{Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", AddressingStyle: "virtual"}))
	opts.Close()
	mustCode(t, opts.SetS3(S3Settings{}), ErrClosed)
	mustCode(t, opts.SetFsync(true), ErrClosed)
}
