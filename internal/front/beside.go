package front

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/version"
)

// FullName is the full program's file name in a release archive, beside nuv.
const FullName = "nuv-full"

// Beside returns the full program installed next to the nuv binary self (an archive's layout:
// nuv, nuv-full and the `task` symlink side by side), or "" when there is none. self's symlinks
// are resolved first, so nuv run as a `task` link in another directory looks beside the real
// binary. The program found must be a build of the same version as mine (read from its build
// information, not by running it); one of another version is an error naming both.
func Beside(self string, mine version.Build) (string, error) {
	real, err := filepath.EvalSymlinks(self)
	if err != nil {
		return "", fmt.Errorf("locate the nuv binary %s: %w", self, err)
	}
	p := filepath.Join(filepath.Dir(real), FullName)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if !companion.IsExecutable(p) {
		return "", fmt.Errorf("%s beside %s is not an executable file", p, real)
	}
	theirs, err := version.Of(p)
	if err != nil {
		return "", fmt.Errorf("%s beside nuv %s: %w", p, mine, err)
	}
	if !mine.Same(theirs) {
		return "", fmt.Errorf("%s is nuv-full %s, but this nuv (%s) is %s: the programs of one release go together; install nuv and nuv-full from one archive (or remove %s, or set %s to a build of ./cmd/nuv-full of version %s)",
			p, theirs, real, mine, p, EnvFull, mine)
	}
	return p, nil
}
