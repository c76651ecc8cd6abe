package jobspec

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
	"golang.org/x/crypto/bcrypt"
)

// metaOf parses a job whose meta "v" is expr and returns the rendered string.
func metaOf(t *testing.T, expr string, parse func(src []byte) (map[string]string, error)) (string, error) {
	t.Helper()
	src := []byte("job \"f\" {\n  meta {\n    v = " + expr + "\n  }\n}\n")
	meta, err := parse(src)
	if err != nil {
		return "", err
	}
	return meta["v"], nil
}

func TestFunctions_PureFunctionsUpstreamJobFilesCall(t *testing.T) {
	agentParse := func(src []byte) (map[string]string, error) {
		job, err := Parse("f.hcl", src, nil)
		if err != nil {
			return nil, err
		}
		return job.Meta, nil
	}
	cases := []struct {
		name string
		expr string
		want string
	}{
		{"base64encode", `base64encode("hello")`, "aGVsbG8="},
		{"base64decode", `base64decode("aGVsbG8=")`, "hello"},
		{"urlencode", `urlencode("a b&c")`, "a+b%26c"},
		{"sha256", `sha256("x")`, "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
		{"sha512 length", `strlen(sha512("x"))`, "128"},
		{"md5", `md5("x")`, "9dd4e461268c8034f5c8564e155c67a6"},
		{"cidrhost", `cidrhost("10.0.0.0/24", 5)`, "10.0.0.5"},
		{"cidrnetmask", `cidrnetmask("10.0.0.0/20")`, "255.255.240.0"},
		{"cidrsubnet", `cidrsubnet("10.0.0.0/16", 8, 2)`, "10.0.2.0/24"},
		{"cidrsubnets", `join(",", cidrsubnets("10.0.0.0/16", 8, 8))`, "10.0.0.0/24,10.0.1.0/24"},
		{"uuidv5 is deterministic", `uuidv5("dns", "example.com")`, "cfbff0d1-9375-5685-968c-48ce8b15ae17"},
		{"uuidv4 has the v4 shape", `substr(uuidv4(), 14, 1)`, "4"},
		{"yamlencode", `yamlencode({a = 1})`, "\"a\": 1\n"},
		{"yamldecode", `yamldecode("a: [1, 2]").a[1]`, "2"},
		{"index of a list", `index(["a", "b", "c"], 1)`, "b"},
		{"index of a map", `index({a = 1, c = 2}, "c")`, "2"},
		{"convert", `jsonencode(convert([1, 2], list(string)))`, `["1","2"]`},
		{"basename", `basename("/etc/app/conf.tpl")`, "conf.tpl"},
		{"dirname", `dirname("/etc/app/conf.tpl")`, "/etc/app"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := metaOf(t, tc.expr, agentParse)
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestFunctions_BcryptCostIsBounded(t *testing.T) {
	parse := func(src []byte) (map[string]string, error) {
		job, err := Parse("f.hcl", src, nil)
		if err != nil {
			return nil, err
		}
		return job.Meta, nil
	}
	hash, err := metaOf(t, `bcrypt("pw", 4)`, parse)
	must.NoError(t, err)
	must.NoError(t, bcrypt.CompareHashAndPassword([]byte(hash), []byte("pw")))

	_, err = metaOf(t, `bcrypt("pw", 31)`, parse)
	must.ErrorContains(t, err, "bcrypt cost 31 is over the limit of 12")
}

// The agent parses jobs for API callers: a job file must not read the agent's disk.
func TestFunctions_FilesystemRefusedWhenTheAgentParses(t *testing.T) {
	for _, expr := range []string{`file("/etc/hostname")`, `filebase64("/etc/hostname")`,
		`fileexists("/etc/hostname")`, `join(",", fileset("/etc", "*"))`, `abspath(".")`, `pathexpand("~")`} {
		t.Run(expr, func(t *testing.T) {
			_, err := Parse("f.hcl", []byte("job \"f\" {\n  meta {\n    v = "+expr+"\n  }\n}\n"), nil)
			must.Error(t, err)
			must.StrContains(t, err.Error(), "reads the filesystem, which is only allowed when the CLI parses a job file")
		})
	}
}

func TestFunctions_FilesystemRelativeToTheJobFileForTheCLI(t *testing.T) {
	dir := t.TempDir()
	must.NoError(t, os.MkdirAll(filepath.Join(dir, "tpl"), 0o755))
	must.NoError(t, os.WriteFile(filepath.Join(dir, "tpl", "app.conf.tpl"), []byte("port = {{ env \"NOMAD_PORT_http\" }}\n"), 0o644))
	src := []byte(`job "f" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      template {
        data        = file("tpl/app.conf.tpl")
        destination = "local/app.conf"
      }
      meta {
        b64    = filebase64("tpl/app.conf.tpl")
        exists = fileexists("tpl/app.conf.tpl")
        absent = fileexists("tpl/none")
        set    = join(",", fileset(".", "tpl/*.tpl"))
        abs    = abspath("tpl")
        home   = pathexpand("~/x")
      }
    }
  }
}
`)
	job, err := ParseLocal(filepath.Join(dir, "job.nomad.hcl"), src, nil, dir)
	must.NoError(t, err)
	task := job.TaskGroups[0].Tasks[0]
	must.Eq(t, "port = {{ env \"NOMAD_PORT_http\" }}\n", *task.Templates[0].EmbeddedTmpl)
	must.Eq(t, "true", task.Meta["exists"])
	must.Eq(t, "false", task.Meta["absent"])
	must.Eq(t, "tpl/app.conf.tpl", task.Meta["set"])
	must.True(t, strings.HasPrefix(task.Meta["b64"], "cG9ydCA9IHt7"))
	// abspath and pathexpand are upstream's: abspath against the working directory (as
	// filepath.Abs), pathexpand expanding ~ to the user's home.
	wd, err := os.Getwd()
	must.NoError(t, err)
	must.Eq(t, filepath.Join(wd, "tpl"), task.Meta["abs"])
	home, err := os.UserHomeDir()
	must.NoError(t, err)
	must.Eq(t, filepath.Join(home, "x"), task.Meta["home"])
}

// Every function issue 30 found upstream's job files calling and this parser lacking is
// defined for the CLI, and for the agent too except the filesystem ones (refused there, with
// a message, by TestFunctions_FilesystemRefusedWhenTheAgentParses).
func TestFunctions_EveryFunctionUpstreamJobFilesCallIsDefined(t *testing.T) {
	names := []string{"abspath", "base64decode", "base64encode", "basename", "bcrypt",
		"cidrhost", "cidrnetmask", "cidrsubnet", "cidrsubnets", "convert", "dirname", "file",
		"filebase64", "fileexists", "fileset", "index", "pathexpand", "rsadecrypt", "sha256",
		"sha512", "urlencode", "uuidv4", "uuidv5", "yamldecode", "yamlencode"}
	cli, agent := functions(&fileAccess{baseDir: t.TempDir()}), functions(nil)
	for _, name := range names {
		_, onCLI := cli[name]
		_, onAgent := agent[name]
		must.True(t, onCLI, must.Sprintf("%s missing for the CLI", name))
		must.True(t, onAgent, must.Sprintf("%s missing for the agent", name))
	}
}

func TestFunctions_RSADecrypt(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must.NoError(t, err)
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, &key.PublicKey, []byte("s3cret"))
	must.NoError(t, err)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	expr := `rsadecrypt("` + base64.StdEncoding.EncodeToString(ct) + `", <<EOK
` + string(keyPEM) + `EOK
)`
	got, err := metaOf(t, expr, func(src []byte) (map[string]string, error) {
		job, err := Parse("f.hcl", src, nil)
		if err != nil {
			return nil, err
		}
		return job.Meta, nil
	})
	must.NoError(t, err)
	must.Eq(t, "s3cret", got)
}
