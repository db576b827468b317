package dockerapi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Demux copies the daemon's multiplexed stream (what a container or exec without a TTY prints)
// from r to stdout and stderr until r ends. Each frame is an 8-byte header (stream: 0 stdin,
// 1 stdout, 2 stderr; three zero bytes; the payload's length, big-endian uint32) and its payload.
// A stream that ends inside a frame, or names an unknown stream, is an error.
func Demux(r io.Reader, stdout, stderr io.Writer) error {
	var hdr [8]byte
	for {
		n, err := io.ReadFull(r, hdr[:])
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("the output stream ended inside a frame header (%d of 8 bytes)", n)
		}
		if err != nil {
			return err
		}
		var w io.Writer
		switch hdr[0] {
		case 0, 1:
			w = stdout
		case 2:
			w = stderr
		default:
			return fmt.Errorf("the output stream has a frame of unknown stream %d (not docker's multiplexed stream?)", hdr[0])
		}
		size := int64(binary.BigEndian.Uint32(hdr[4:]))
		copied, err := io.CopyN(w, r, size)
		if err == io.EOF {
			return fmt.Errorf("the output stream ended inside a frame (%d of %d bytes)", copied, size)
		}
		if err != nil {
			return err
		}
	}
}
