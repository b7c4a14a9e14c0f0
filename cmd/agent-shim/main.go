package main

import (
	"context"
	"os"
)

func main() { os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)) }
