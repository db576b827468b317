// Package completion is nuv's shell completion: `nuv completion bash|zsh|fish` prints a script that
// asks nuv itself for the candidates of the word being completed (`nuv completion __complete WORDS`,
// the way cobra-based CLIs such as kubectl and kind do it), so what is offered always matches the
// binary, the bundle actually loaded (plugins included), the project's clusters and its Taskfile.
//
// Built-in commands are completed from the same command tree their help is printed from
// (cli.Command and cli.Group): a group's verbs, the value kind of each positional argument and
// flag (providers from the provider registry, stacks and add-ons from the add-ons index, clusters,
// the inventory); flags are read from the help each verb prints from its own flag set.
package completion

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// Source is what completion asks nuv about. Each method answers from nuv's real state; errors are
// left out (a completion offers what it can and never prints an error into the user's prompt).
type Source interface {
	// Commands are the built-in command names (`nuv cluster`, `nuv kube`, ...).
	Commands() []string
	// Tools are the built-in tool names without their dash (`task` for `nuv -task`).
	Tools() []string
	// Help is the help text of the built-in command line `nuv ARGS --help` (stdout and stderr).
	Help(ctx context.Context, args ...string) string
	// BundleTasks lists every task of the loaded bundle and its plugins as the words after `nuv`
	// ("local create"), leaving out those hidden by a built-in command.
	BundleTasks(ctx context.Context) [][]string
	// Tree is the built-in command tree, the one help is printed from.
	Tree() []cli.Command
	// Values are the values of a kind (cli.ValProvider, cli.ValStack, ...; see package cli).
	Values(ctx context.Context, kind string) []string
	// InventoryNumbers are the numbers `nuv kube list` shows for the project's clusters (1, 2, ...).
	InventoryNumbers() []string
	// TaskfileTasks are the tasks of the project's Taskfile (`task --list-all`).
	TaskfileTasks(ctx context.Context) []string
}

// Shells are the shells a script exists for.
var Shells = []string{"bash", "fish", "zsh"}

// Complete returns the candidates for the last of words, the command line up to the cursor:
// words[0] is the program ("nuv", or "task" for the go-task link) and the last word is the one being
// completed (possibly ""). Candidates start with that word and are sorted without duplicates.
func Complete(ctx context.Context, src Source, words []string) []string {
	if len(words) == 0 {
		return nil
	}
	prog, args, cur := words[0], words[1:len(words)-1], words[len(words)-1]
	if len(words) == 1 {
		args, cur = nil, ""
	}
	var cands []string
	if base(prog) == "task" {
		cands = taskfile(ctx, src, args, cur)
	} else {
		cands = nuv(ctx, src, args, cur)
	}
	return filter(cands, cur)
}

func base(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[i+1:]
	}
	return strings.TrimSuffix(p, ".exe")
}

func nuv(ctx context.Context, src Source, args []string, cur string) []string {
	if len(args) == 0 {
		if strings.HasPrefix(cur, "-") {
			return dashed(append(src.Tools(), "help"))
		}
		cands := append([]string{}, src.Commands()...)
		for _, t := range src.BundleTasks(ctx) {
			cands = append(cands, t[0])
		}
		return cands
	}
	first := args[0]
	if strings.HasPrefix(first, "-") {
		if strings.TrimLeft(first, "-") == "task" {
			return taskfile(ctx, src, args[1:], cur)
		}
		return nil // other tools take files and values: the shell's default completion
	}
	if contains(src.Commands(), first) {
		return command(ctx, src, args, cur)
	}
	return bundle(ctx, src, args, cur)
}

// command completes the words after a built-in command, from the command tree.
func command(ctx context.Context, src Source, args []string, cur string) []string {
	var c *cli.Command
	for _, t := range src.Tree() {
		if t.Name == args[0] {
			t := t
			c = &t
		}
	}
	if c == nil {
		return nil
	}
	helpArgs := []string{c.Name}
	kinds, variadic, flagKinds := c.Args, false, c.FlagValues
	words := args[1:]
	for g := c.Group; g != nil; {
		if len(words) == 0 {
			if strings.HasPrefix(cur, "-") {
				return Flags(src.Help(ctx, helpArgs...))
			}
			return g.VerbNames()
		}
		verb := g.Lookup(words[0])
		if verb == nil || verb.Hidden {
			return nil
		}
		helpArgs = append(helpArgs, words[0])
		kinds, variadic, flagKinds = verb.Args, verb.Variadic, verb.FlagValues
		words, g = words[1:], verb.Sub
	}
	if prev := args[len(args)-1]; len(args) > len(helpArgs) && strings.HasPrefix(prev, "--") && !strings.Contains(prev, "=") {
		if kind, ok := flagKinds[strings.TrimPrefix(prev, "--")]; ok {
			return src.Values(ctx, kind)
		}
		if prev == "--kubeconfig" {
			return nil // a file: the shell's default completion
		}
	}
	// `nuv all-kubes [flags] -- TARGET`: after --, the target
	if len(kinds) > 0 && kinds[0] == cli.ValCommand {
		if i := index(words, "--"); i >= 0 {
			if i == len(words)-1 {
				return src.Values(ctx, cli.ValCommand)
			}
			return nil
		}
		if strings.HasPrefix(cur, "-") {
			return Flags(src.Help(ctx, helpArgs...))
		}
		return nil
	}
	if strings.HasPrefix(cur, "-") {
		return Flags(src.Help(ctx, helpArgs...))
	}
	positional := 0 // words that are not flags
	for _, a := range words {
		if !strings.HasPrefix(a, "-") {
			positional++
		}
	}
	switch {
	case positional < len(kinds):
		return src.Values(ctx, kinds[positional])
	case variadic && len(kinds) > 0:
		return src.Values(ctx, kinds[len(kinds)-1])
	}
	return nil
}

// bundle completes a command line that walks the task bundle: the next folder or task name.
func bundle(ctx context.Context, src Source, args []string, cur string) []string {
	var cands []string
	for _, t := range src.BundleTasks(ctx) {
		if len(t) > len(args) && equal(t[:len(args)], args) {
			cands = append(cands, t[len(args)])
		}
	}
	return cands
}

// taskfile completes `task ARGS` and `nuv -task ARGS`: go-task's flags and the Taskfile's tasks.
func taskfile(ctx context.Context, src Source, args []string, cur string) []string {
	if contains(args, "--") {
		return nil
	}
	if strings.HasPrefix(cur, "-") {
		return Flags(src.Help(ctx, "-task"))
	}
	if len(args) > 0 && contains([]string{"--dir", "-d", "--taskfile", "-t", "--output", "-o"}, args[len(args)-1]) {
		return nil
	}
	// `task use N=` (and detect, watch): the numbers `nuv kube list` shows
	if strings.HasPrefix(cur, "N=") && len(args) > 0 && contains([]string{"use", "detect", "watch"}, args[len(args)-1]) {
		var out []string
		for _, n := range src.InventoryNumbers() {
			out = append(out, "N="+n)
		}
		return out
	}
	return src.TaskfileTasks(ctx)
}

var (
	flagRE = lazy.MustCompile(`(?m)^\s+(?:-[A-Za-z0-9], )?(--[a-z0-9][a-z0-9-]*)`)
)

// Flags returns the long flags of a help text: those of pflag's flag listing ("  -n, --tail int").
func Flags(help string) []string {
	var out []string
	for _, m := range flagRE.FindAllStringSubmatch(help, -1) {
		out = append(out, m[1])
	}
	return dedupe(out)
}

func dashed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "-" + n
	}
	return out
}

func filter(cands []string, prefix string) []string {
	var out []string
	for _, c := range cands {
		if c != "" && strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return dedupe(out)
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func contains(s []string, x string) bool { return index(s, x) >= 0 }

func index(s []string, x string) int {
	for i, y := range s {
		if y == x {
			return i
		}
	}
	return -1
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Script returns the completion script for shell (bash, zsh or fish). Each script registers the
// completion of `nuv` and of `task` (nuv linked as go-task) and asks `nuv completion __complete`.
func Script(shell string) (string, error) {
	switch shell {
	case "bash":
		return bashScript, nil
	case "zsh":
		return zshScript, nil
	case "fish":
		return fishScript, nil
	}
	return "", fmt.Errorf("unknown shell %q: nuv completes %s", shell, strings.Join(Shells, ", "))
}

// bash: the line up to the cursor goes to nuv, split at blanks (bash's COMP_WORDS also splits at
// ':' and '=', which would cut Taskfile tasks such as docker:build); candidates are given back
// relative to bash's own current word. An empty answer falls back to file names (complete -o
// default), as for a tool's arguments or a --kubeconfig value.
const bashScript = `# nuv shell completion for bash: source <(nuv completion bash)
_nuv() {
    local line=${COMP_LINE:0:COMP_POINT}
    local cur=${line##*[[:space:]]}
    local -a words
    IFS=$' \t\n' read -ra words <<< "${line%"$cur"}"
    local IFS=$'\n'
    COMPREPLY=($(nuv completion __complete "${words[@]}" "$cur" 2>/dev/null))
    if [[ $cur == *[:=]* ]]; then
        local pre=${cur%"${cur##*[:=]}"}
        COMPREPLY=("${COMPREPLY[@]#"$pre"}")
    fi
}
complete -o default -F _nuv nuv
complete -o default -F _nuv task
`

const zshScript = `#compdef nuv task
# nuv shell completion for zsh: source <(nuv completion zsh)
_nuv() {
    local -a cands
    cands=("${(@f)$(nuv completion __complete "${(@)words[1,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
    if (( ${#cands} )) && [[ -n ${cands[1]} ]]; then
        compadd -Q -- "${cands[@]}"
    else
        _files
    fi
}
if (( $+functions[compdef] )); then
    compdef _nuv nuv task
fi
`

const fishScript = `# nuv shell completion for fish: nuv completion fish | source
function __nuv_complete
    set -l words (commandline -opc)
    nuv completion __complete $words (commandline -ct) 2>/dev/null
end
complete -c nuv -f -a '(__nuv_complete)'
complete -c task -f -a '(__nuv_complete)'
`
