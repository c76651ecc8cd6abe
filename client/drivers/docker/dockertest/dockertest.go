// Package dockertest builds the docker driver's test image and gives tests a client of the
// local engine. It is for tests only; the binary does not link it.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/shoenig/test/must"
)

// Image is the image the tests run: FROM scratch with taskbin (dockertest/taskbin).
const Image = "nomadfork-docker-test:taskbin"

var (
	imageOnce sync.Once
	imageErr  error
)

// Client is a client of the local engine. Without an engine the test is skipped,
// except in CI (or with NOMAD_TEST_DOCKER set), where a missing engine is a failure: these
// tests are the only proof the driver works.
func Client(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = cli.Ping(ctx)
	}
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("NOMAD_TEST_DOCKER") != "" {
			t.Fatalf("docker engine unavailable (CI requires it): %v", err)
		}
		t.Skipf("docker engine unavailable: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// BuildImage builds Image once per test binary: taskbin compiled static, in a tar
// context with its Dockerfile, through the engine's build API.
func BuildImage(t testing.TB, cli *client.Client) {
	t.Helper()
	imageOnce.Do(func() { imageErr = buildImage(t.TempDir(), cli, Image) })
	must.NoError(t, imageErr)
}

func buildImage(dir string, cli *client.Client, tag string) error {
	bin := filepath.Join(dir, "taskbin")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nomadfork/nomad/client/drivers/docker/dockertest/taskbin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return &buildError{"go build: " + err.Error() + ": " + string(out)}
	}
	binBytes, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	files := []struct {
		name string
		mode int64
		body []byte
	}{
		{"Dockerfile", 0o644, []byte("FROM scratch\nCOPY taskbin /taskbin\nENTRYPOINT [\"/taskbin\"]\n")},
		{"taskbin", 0o755, binBytes},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	resp, err := cli.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if strings.Contains(string(out), `"error"`) {
		return &buildError{"image build: " + string(out)}
	}
	return nil
}

type buildError struct{ msg string }

func (e *buildError) Error() string { return e.msg }

// PauseImage is a pause image for bridge-mode tests (infra_image): Image sleeping until it is
// killed, as upstream's pause does; there is no registry.k8s.io to pull from here.
const PauseImage = "nomadfork-docker-test:pause"

var pauseOnce sync.Once

// BuildPauseImage builds PauseImage (and Image) once per test binary.
func BuildPauseImage(t testing.TB, cli *client.Client) {
	t.Helper()
	BuildImage(t, cli)
	var err error
	pauseOnce.Do(func() {
		var ctxTar bytes.Buffer
		tw := tar.NewWriter(&ctxTar)
		body := []byte("FROM " + Image + "\nCMD [\"sleep\"]\n")
		if err = tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(body))}); err != nil {
			return
		}
		if _, err = tw.Write(body); err != nil {
			return
		}
		if err = tw.Close(); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		resp, berr := cli.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{PauseImage}, Remove: true, ForceRemove: true})
		if berr != nil {
			err = berr
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(out), `"error"`) {
			err = &buildError{"pause image build: " + string(out)}
		}
	})
	must.NoError(t, err)
}
