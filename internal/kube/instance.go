package kube

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// DefaultInstance is the instance file name used when WHISK is not set.
const DefaultInstance = "whisk"

// InstanceFile returns the instance file for a cluster type: tests/<type>/<name>.yaml when it
// exists, else tests/generic/<name>.yaml. name defaults to "whisk"; it must be a plain file name.
// When neither exists the error names both paths.
func InstanceFile(project, kubeType, name string) (string, error) {
	if name == "" {
		name = DefaultInstance
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("instance name %q: want a plain name like %q (tests/<type>/<name>.yaml)", name, DefaultInstance)
	}
	if kubeType != "" && !ValidType(kubeType) {
		return "", fmt.Errorf("cluster type %q: unknown (valid: %s)", kubeType, strings.Join(Types(), ", "))
	}
	var tried []string
	dirs := []string{kubeType, TypeGeneric}
	if kubeType == "" || kubeType == TypeGeneric {
		dirs = dirs[1:]
	}
	for _, d := range dirs {
		for _, ext := range []string{".yaml", ".yml"} {
			p := filepath.Join(project, "tests", d, name+ext)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
		tried = append(tried, filepath.Join(project, "tests", d, name+".yaml"))
	}
	return "", fmt.Errorf("no instance file %q: tried %s", name, strings.Join(tried, ", "))
}

var varRef = lazy.MustCompile(`\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// RenderInstance reads an instance file and substitutes ${VAR} from the environment, then from the
// project's .env (the directory above tests/). ${VAR:-default} gives default when VAR is unset or
// empty; $${ is a literal ${; whole-line # comments are left alone. A variable neither set
// (non-empty) in the environment nor defined in .env is an error naming it, the file and the
// line, never an empty string.
func RenderInstance(path string, getenv func(string) string) ([]byte, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("instance file: %w", err)
	}
	dotenv, envFile, err := projectDotenv(path)
	if err != nil {
		return nil, err
	}
	lookup := func(k string) (string, bool) {
		if v := getenv(k); v != "" {
			return v, true
		}
		v, ok := dotenv[k]
		return v, ok
	}
	var out bytes.Buffer
	var missing []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "#") {
			// A whole-line YAML comment is left as written: documenting ${VAR} is not using it.
			out.WriteString(sc.Text())
			out.WriteByte('\n')
			continue
		}
		text := varRef.ReplaceAllStringFunc(sc.Text(), func(m string) string {
			if m == "$${" {
				return "${"
			}
			sub := varRef.FindStringSubmatch(m)
			name, def := sub[1], sub[2]
			if v, ok := lookup(name); ok && (v != "" || def == "") {
				return v
			}
			if def != "" {
				return strings.TrimPrefix(def, ":-")
			}
			missing = append(missing, fmt.Sprintf("line %d: ${%s}", line, name))
			return m
		})
		out.WriteString(text)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("instance file %s: %w", path, err)
	}
	if len(missing) > 0 {
		where := "the environment"
		if envFile != "" {
			where += " or " + envFile
		}
		return nil, fmt.Errorf("instance file %s: variables not set in %s: %s", path, where, strings.Join(missing, "; "))
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		out.Truncate(out.Len() - 1)
	}
	return out.Bytes(), nil
}

// projectDotenv reads <project>/.env for an instance file under <project>/tests/; an absent file
// is an empty map, a malformed one an error naming it.
func projectDotenv(instance string) (map[string]string, string, error) {
	abs, err := filepath.Abs(instance)
	if err != nil {
		return nil, "", err
	}
	root := ""
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if filepath.Base(d) == "tests" {
			root = filepath.Dir(d)
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if root == "" {
		return nil, "", nil
	}
	p := filepath.Join(root, ".env")
	m, err := dotenv.Read(p)
	if err != nil || m == nil {
		return nil, "", err
	}
	return m, p, nil
}
