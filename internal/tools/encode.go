package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
)

func base64Tool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("base64", "[-e | -d] [-n] [TEXT...]", `
Encodes TEXT (the arguments joined by spaces; stdin when none) as base64, or decodes it with -d.
Decoding ignores surrounding whitespace and accepts padded and unpadded, standard and URL-safe
input. The result ends with a newline unless -n.`, `nuv -base64 hello
echo aGVsbG8= | nuv -base64 -d`)
	f.BoolP("encode", "e", true, "encode (the default; accepted for published bundles)")
	decode := f.BoolP("decode", "d", false, "decode instead of encode")
	noNL := f.BoolP("no-newline", "n", false, "do not print a trailing newline")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	text, err := input(env, f.Args())
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	nl := "\n"
	if *noNL {
		nl = ""
	}
	if !*decode {
		fmt.Fprint(env.Out, base64.StdEncoding.EncodeToString([]byte(text))+nl)
		return nil
	}
	out, err := decodeBase64(text)
	if err != nil {
		return failf("base64", "invalid base64 input: %v", err)
	}
	fmt.Fprint(env.Out, string(out)+nl)
	return nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
	var firstErr error
	for _, e := range encs {
		b, err := e.DecodeString(s)
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func urlencTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("urlenc", "[-e] [-s SEP] ARG...", `
URL-encodes each ARG and joins them with SEP (default "&"): KEY=VALUE becomes a query parameter
with key and value escaped; an ARG without "=" is escaped whole. With -e each ARG is the name of an
environment variable and becomes NAME=<its value>.`, `nuv -urlenc name=my op=a+b
nuv -urlenc -e HOME USER`)
	fromEnv := f.BoolP("env", "e", false, "arguments are environment variable names")
	sep := f.StringP("sep", "s", "&", "separator between encoded arguments")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	if f.NArg() == 0 {
		return f.usagef("nothing to encode")
	}
	fmt.Fprintln(env.Out, urlencode(f.Args(), *fromEnv, *sep, env.Getenv))
	return nil
}

func urlencode(args []string, fromEnv bool, sep string, getenv func(string) string) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if fromEnv {
			parts = append(parts, url.QueryEscape(a)+"="+url.QueryEscape(getenv(a)))
			continue
		}
		if k, v, ok := strings.Cut(a, "="); ok {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
			continue
		}
		parts = append(parts, url.QueryEscape(a))
	}
	return strings.Join(parts, sep)
}
