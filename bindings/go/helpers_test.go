package smd

import "strconv"

func strconvFormat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
