package dockerapi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/iotest"
)

func TestResolve(t *testing.T) {
	const home = "/home/u"
	files := map[string]string{
		"/home/u/.docker/config.json": `{"auths": {}}`,
		"/ctx/config.json":            `{"currentContext": "remote"}`,
		"/dflt/config.json":           `{"currentContext": "default"}`,
		"/bad/config.json":            `{"currentContext": `,
		"/h2/.docker/config.json":     `{"currentContext": "colima"}`,
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		if p == "/denied/config.json" {
			return nil, fs.ErrPermission
		}
		return nil, fs.ErrNotExist
	}
	for _, tc := range []struct {
		name   string
		env    []string
		socket string // empty: the CLI
		reason string // part of the reason when socket is empty
	}{
		{"unset", []string{"HOME=" + home}, DefaultSocket, ""},
		{"no home", []string{}, DefaultSocket, ""},
		{"unix", []string{"DOCKER_HOST=unix:///run/d.sock"}, "/run/d.sock", ""},
		{"last wins", []string{"DOCKER_HOST=tcp://h:2375", "DOCKER_HOST=unix:///run/d.sock"}, "/run/d.sock", ""},
		{"empty host is unset", []string{"DOCKER_HOST=", "HOME=" + home}, DefaultSocket, ""},
		{"tcp", []string{"DOCKER_HOST=tcp://10.0.0.1:2376"}, "", "DOCKER_HOST=tcp://10.0.0.1:2376 is not a unix:// socket"},
		{"ssh", []string{"DOCKER_HOST=ssh://me@h"}, "", "not a unix:// socket"},
		{"unix without path", []string{"DOCKER_HOST=unix://"}, "", "not a unix:// socket"},
		{"host beats context", []string{"DOCKER_HOST=unix:///d.sock", "DOCKER_CONTEXT=remote", "DOCKER_CONFIG=/ctx"}, "/d.sock", ""},
		{"context env", []string{"DOCKER_CONTEXT=remote", "HOME=" + home}, "", "DOCKER_CONTEXT=remote"},
		{"context env default", []string{"DOCKER_CONTEXT=default", "HOME=" + home}, DefaultSocket, ""},
		{"config context", []string{"DOCKER_CONFIG=/ctx"}, "", "names context remote"},
		{"config default context", []string{"DOCKER_CONFIG=/dflt"}, DefaultSocket, ""},
		{"config missing", []string{"DOCKER_CONFIG=/none"}, DefaultSocket, ""},
		{"config not JSON", []string{"DOCKER_CONFIG=/bad"}, "", "/bad/config.json is not JSON"},
		{"config unreadable", []string{"DOCKER_CONFIG=/denied"}, "", "/denied/config.json"},
		{"home config context", []string{"HOME=/h2"}, "", "/h2/.docker/config.json names context colima"},
		{"home config without context", []string{"HOME=" + home}, DefaultSocket, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := Resolve(tc.env, read)
			if ep.Socket != tc.socket {
				t.Fatalf("Resolve(%q) = %+v, want socket %q", tc.env, ep, tc.socket)
			}
			if tc.socket == "" && !strings.Contains(ep.Reason, tc.reason) {
				t.Fatalf("Resolve(%q).Reason = %q, want it to say %q", tc.env, ep.Reason, tc.reason)
			}
			if tc.socket != "" && ep.Reason != "" {
				t.Fatalf("Resolve(%q) = %+v: a reason with a socket", tc.env, ep)
			}
		})
	}
}

func frame(stream byte, payload string) []byte {
	h := make([]byte, 8, 8+len(payload))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(payload)))
	return append(h, payload...)
}

func TestDemux(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	interleaved := cat(frame(1, "out1 "), frame(2, "err1 "), frame(1, "out2"), frame(2, ""), frame(2, "err2"))
	for _, tc := range []struct {
		name        string
		in          []byte
		out, errOut string
		err         string
	}{
		{"empty", nil, "", "", ""},
		{"stdout", frame(1, "running\n"), "running\n", "", ""},
		{"interleaved", interleaved, "out1 out2", "err1 err2", ""},
		{"stdin stream is stdout", frame(0, "x"), "x", "", ""},
		{"large frame", frame(1, strings.Repeat("a", 100000)), strings.Repeat("a", 100000), "", ""},
		{"short header", cat(frame(1, "ok"), []byte{1, 0, 0}), "ok", "", "inside a frame header (3 of 8 bytes)"},
		{"short payload", cat(frame(2, "e"), frame(1, "hello")[:10]), "he", "e", "inside a frame (2 of 5 bytes)"},
		{"unknown stream", cat(frame(1, "a"), frame(7, "b")), "a", "", "unknown stream 7"},
	} {
		for _, rd := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{
			{"whole", func(r io.Reader) io.Reader { return r }},
			{"one byte reads", iotest.OneByteReader},
			{"half reads", iotest.HalfReader},
			{"data with EOF", iotest.DataErrReader},
		} {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				var out, errOut bytes.Buffer
				err := Demux(rd.wrap(bytes.NewReader(tc.in)), &out, &errOut)
				if tc.err == "" && err != nil {
					t.Fatalf("Demux: %v", err)
				}
				if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
					t.Fatalf("Demux error = %v, want one saying %q", err, tc.err)
				}
				if out.String() != tc.out || errOut.String() != tc.errOut {
					t.Fatalf("Demux wrote stdout %q stderr %q, want %q and %q", out.String(), errOut.String(), tc.out, tc.errOut)
				}
			})
		}
	}
}

func TestDemuxReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(frame(1, "part")[:9]), iotest.ErrReader(boom))
	var out bytes.Buffer
	if err := Demux(r, &out, io.Discard); !errors.Is(err, boom) {
		t.Fatalf("Demux error = %v, want the reader's %v", err, boom)
	}
}

func TestErrorMessage(t *testing.T) {
	e := &Error{Op: "inspect container web", Status: 404, Message: "No such container: web"}
	if got, want := e.Error(), "docker API: inspect container web: No such container: web (HTTP 404)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !IsNotFound(errors.Join(errors.New("ctx"), e)) || IsNotFound(&Error{Status: 409}) {
		t.Fatal("IsNotFound: only a wrapped 404 is not found")
	}
}
