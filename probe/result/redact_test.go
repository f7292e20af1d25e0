package result

import (
	"reflect"
	"testing"
)

func TestSecretsAreNamedByTheirNames(t *testing.T) {
	for name, secret := range map[string]bool{
		"NVIDIA_API_KEY": true, "GITHUB_TOKEN": true, "aws_secret_access_key": true, "DB_PASSWORD": true, "PASSWD": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "HTTP_AUTH": true, "POCL_DEVICES": false, "NEOReadDebugKeys": false,
		"CUDA_VISIBLE_DEVICES": false, "LD_PRELOAD": false,
	} {
		if got := IsSecret(name); got != secret {
			t.Errorf("IsSecret(%s) = %v, want %v", name, got, secret)
		}
	}
}

func TestRedactArgsKeepsTheCommandUsable(t *testing.T) {
	got := RedactArgs([]string{"clmemprobe", "run", "--variant", "x:API_TOKEN=abc,POCL_DEBUG=all", "--size", "1MiB", "MY_SECRET=42"})
	want := []string{"clmemprobe", "run", "--variant", "x:API_TOKEN=<redacted>,POCL_DEBUG=all", "--size", "1MiB", "MY_SECRET=<redacted>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
