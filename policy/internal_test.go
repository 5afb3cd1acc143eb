package policy_test

import "github.com/cedar-policy/cedar-go"

func cedarString(s string) cedar.String { return cedar.String(s) }
