package dockerfile

import (
	"os"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// untarFile extracts the OCI layout archive a build tool wrote into dir (fsutil.Untar: nothing
// lands outside dir).
func untarFile(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return fsutil.Untar(f, dir)
}
