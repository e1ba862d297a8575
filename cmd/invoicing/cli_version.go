package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Stamped at build time, for builds that carry no VCS information (go run,
// Docker builds without .git, GOFLAGS=-buildvcs=false):
//
//	go build -ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.revision=$(git rev-parse HEAD)"
//
// make build, make run and the Dockerfile do so.
var (
	version  string
	revision string
)

// buildVersion is what `invoicing version` prints.
type buildVersion struct {
	Version   string // a tag, git describe output, a module version, or "(devel)"
	Revision  string // the VCS revision, "" when unknown
	Modified  bool   // built from a working tree with uncommitted changes
	GoVersion string
}

// String is one line per fact, the first naming the version:
//
//	invoicing v1.2.0-3-gabc1234-dirty
//	revision: abc1234... (modified)
//	go: go1.26.0
func (v buildVersion) String() string {
	rev := v.Revision
	if rev == "" {
		rev = "unknown (build with make build, or -ldflags \"-X main.revision=...\")"
	} else if v.Modified {
		rev += " (modified)"
	}
	s := "invoicing " + v.Version + "\nrevision: " + rev
	if v.GoVersion != "" {
		s += "\ngo: " + v.GoVersion
	}
	return s
}

// currentBuild describes the running binary.
func currentBuild() buildVersion {
	info, _ := debug.ReadBuildInfo() // nil when not built by the go command with module support
	return describeBuild(info, version, revision)
}

// describeGitHash is the abbreviated hash git describe appends
// ("v1.2.0-3-gabc1234") or prints alone with --always ("abc1234").
var describeGitHash = regexp.MustCompile(`(?:^|-g)([0-9a-f]{7,40})$`)

// describeBuild combines the build information the go command records with
// the ldflags-stamped version and revision, which take precedence.
func describeBuild(info *debug.BuildInfo, stampedVersion, stampedRevision string) buildVersion {
	v := buildVersion{Version: stampedVersion, Revision: stampedRevision}
	var vcsRevision string
	if info != nil {
		v.GoVersion = info.GoVersion
		if v.Version == "" && info.Main.Version != "" {
			v.Version = info.Main.Version // "(devel)" for a plain go build
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRevision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Revision == "" {
		v.Revision = vcsRevision
	}
	if stampedVersion != "" {
		described, dirty := strings.CutSuffix(stampedVersion, "-dirty")
		v.Modified = v.Modified || dirty
		if m := describeGitHash.FindStringSubmatch(described); v.Revision == "" && m != nil {
			v.Revision = m[1]
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version (also --version)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), currentBuild())
			return err
		},
	}
}
