//go:build !linux

package main

func withoutLandlock() {}
