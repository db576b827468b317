package tools

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"strconv"

	"github.com/nuv-dev/nuv/internal/cli"
)

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomTool(_ context.Context, env *cli.Env, args []string) error {
	f := newFlags("random", "[-u | --int MAX [MIN] | --str LEN [CHARS]]", `
Prints a random value from a cryptographic source: by default a number in [0,1); with -u a UUID
(version 4); with --int an integer in [MIN,MAX] (MIN defaults to 0); with --str a string of LEN
characters drawn from CHARS (default letters and digits).`, `nuv -random -u
nuv -random --int 65535 1024
nuv -random --str 16`)
	uuid := f.BoolP("uuid", "u", false, "print a random UUID")
	asInt := f.Bool("int", false, "print an integer: --int MAX [MIN]")
	asStr := f.Bool("str", false, "print a string: --str LEN [CHARS]")
	if done, err := f.parse(env, args); done || err != nil {
		return err
	}
	a := f.Args()
	switch {
	case *uuid:
		u, err := randomUUID()
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Out, u)
	case *asInt:
		if len(a) < 1 || len(a) > 2 {
			return f.usagef("--int takes MAX and an optional MIN")
		}
		max, err := strconv.ParseInt(a[0], 10, 64)
		min := int64(0)
		if err == nil && len(a) == 2 {
			min, err = strconv.ParseInt(a[1], 10, 64)
		}
		if err != nil || min > max {
			return f.usagef("--int wants integers with MIN <= MAX, got %q", a)
		}
		n, err := rand.Int(rand.Reader, big.NewInt(max-min+1))
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Out, n.Int64()+min)
	case *asStr:
		if len(a) < 1 || len(a) > 2 {
			return f.usagef("--str takes LEN and optional CHARS")
		}
		n, err := strconv.Atoi(a[0])
		chars := alnum
		if len(a) == 2 {
			chars = a[1]
		}
		if err != nil || n < 0 || chars == "" {
			return f.usagef("--str wants a length >= 0 and a non-empty CHARS, got %q", a)
		}
		s, err := randomString(n, []rune(chars))
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Out, s)
	default:
		if len(a) > 0 {
			return f.usagef("unexpected arguments %q", a)
		}
		n, err := rand.Int(rand.Reader, big.NewInt(1<<53))
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Out, strconv.FormatFloat(float64(n.Int64())/(1<<53), 'f', -1, 64))
	}
	return nil
}

func randomString(n int, chars []rune) (string, error) {
	out := make([]rune, n)
	for i := range out {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(chars))))
		if err != nil {
			return "", err
		}
		out[i] = chars[k.Int64()]
	}
	return string(out), nil
}

func randomUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
