// Package jwtkey reads the private keys that sign client assertions
// (private_key_jwt, RFC 7523): one parser for the importer, which signs
// with them, and for the configuration loader, which refuses a key that
// would not sign at its line.
package jwtkey

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// Parse reads a PEM private key, PKCS#8, SEC 1 or PKCS#1: EC P-256, which
// signs ES256, or RSA of at least 2048 bits, which signs RS256. It returns
// the key and its JWS algorithm.
func Parse(p []byte) (crypto.Signer, string, error) {
	block, _ := pem.Decode(p)
	if block == nil {
		return nil, "", errors.New("private key: no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf("private key: the %s PEM block does not parse: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, "", errors.New("private key: an EC key must be on P-256 (ES256)")
		}
		return k, "ES256", nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, "", errors.New("private key: an RSA key must have at least 2048 bits")
		}
		return k, "RS256", nil
	}
	return nil, "", fmt.Errorf("private key: %T is not an EC P-256 or RSA key", key)
}
