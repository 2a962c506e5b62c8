package kbqserve

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/query/evals"
)

// ReadEvalsCommand is the command kbq runs kbq-serve with to read an evals
// file: kbq links no YAML parser, whose initialisation every kbq command
// would pay.
const ReadEvalsCommand = "read-evals"

func newReadEvalsCommand(s *cli.Streams) *cli.Command {
	return &cli.Command{
		Name:      ReadEvalsCommand,
		Usage:     "read a file of retrieval tests and print its queries as JSON, for kbq eval",
		UsageText: "kbq-serve read-evals FILE",
		Hidden:    true,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Usagef("want one evals file")
			}
			name := c.Args().First()
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			js, err := evals.Read(f)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			return json.NewEncoder(s.Out).Encode(js)
		},
	}
}
