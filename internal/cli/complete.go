package cli

import (
	"strings"

	"github.com/spf13/cobra"

	backendall "metalab/backend/all"
	"metalab/internal/cli/cmdutil"
	"metalab/internal/inputfile"
	"metalab/mutate"
	"metalab/mutate/all"
	"metalab/spec"
)

// addCompletions registers shell completion for the flags that name things
// inside the command's first argument: --fn (the kernel's functions),
// --apply (its site ids), --cases and --case (the spec's sets), --op and
// --backend. Completion never fails a command: what cannot be read
// completes to nothing.
func addCompletions(cmd *cobra.Command) {
	reg := func(flag string, f func(cmd *cobra.Command, args []string, toComplete string) []string) {
		if cmd.Flags().Lookup(flag) == nil {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return f(cmd, args, toComplete), cobra.ShellCompDirectiveNoFileComp
		})
	}
	reg("fn", func(cmd *cobra.Command, args []string, _ string) []string {
		if len(args) == 0 {
			return nil
		}
		kernel := args[0]
		if s, err := spec.Load(args[0]); err == nil {
			kernel = s.Source // sweep takes a spec: its source's functions
		}
		f, err := cmdutil.LoadKernel(inputfile.ReadFile, kernel, cmdutil.Macros{})
		if err != nil {
			return nil
		}
		return mutate.FuncNames(f)
	})
	reg("apply", func(cmd *cobra.Command, args []string, _ string) []string {
		if len(args) == 0 {
			return nil
		}
		f, err := cmdutil.LoadKernel(inputfile.ReadFile, args[0], cmdutil.Macros{})
		if err != nil {
			return nil
		}
		fns, _ := cmd.Flags().GetStringArray("fn")
		found, _, err := mutate.FindAll(f, all.Mutations, fns)
		if err != nil {
			return nil
		}
		var ids []string
		for _, s := range found {
			ids = append(ids, s.ID)
		}
		return ids
	})
	sets := func(cmd *cobra.Command, args []string, _ string) []string {
		if len(args) == 0 {
			return nil
		}
		s, err := spec.Load(args[0])
		if err != nil {
			return nil
		}
		var names []string
		for _, set := range s.Sets {
			names = append(names, set.Name)
		}
		return names
	}
	reg("cases", sets)
	reg("check-cases", sets)
	caseNames := func(cmd *cobra.Command, args []string, toComplete string) []string {
		if len(args) == 0 {
			return nil
		}
		s, err := spec.Load(args[0])
		if err != nil {
			return nil
		}
		var names []string
		for _, set := range s.Sets {
			cases, err := s.Cases(set.Name)
			if err != nil {
				continue
			}
			for _, c := range cases {
				if n := set.Name + "/" + c.Name; strings.HasPrefix(n, toComplete) {
					names = append(names, n)
				}
			}
		}
		return names
	}
	reg("case", caseNames)
	reg("target", caseNames)
	reg("explore-case", caseNames)
	ops := func(*cobra.Command, []string, string) []string {
		var names []string
		for _, m := range all.Mutations {
			names = append(names, m.Name)
		}
		return names
	}
	reg("op", ops)
	reg("ops", ops)
	reg("backend", func(*cobra.Command, []string, string) []string {
		return append(backendall.Names(), "auto")
	})
}
