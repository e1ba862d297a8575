package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/invoicing/invoicing/einvoice"
)

func newEinvoiceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "einvoice",
		Short: "Work with EN 16931 e-invoices (UBL 2.1, UN/CEFACT CII D16B)",
	}
	cmd.AddCommand(newEinvoiceValidateCmd())
	return cmd
}

// errInvalidEinvoice makes `einvoice validate` exit 1.
var errInvalidEinvoice = errors.New("not valid EN 16931")

func newEinvoiceValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check UBL or CII e-invoices against the EN 16931 rules the service implements (exit 1 when any fails)",
		Long: `validate reads each FILE, a UBL 2.1 Invoice or CreditNote or a UN/CEFACT CII
D16B CrossIndustryInvoice (the service's or a supplier's), and checks the
EN 16931 business rules the service implements: the mandatory terms
(BR-01 to BR-16), the VAT category rules (identifiers, rates, exemption
reasons), the calculation rules (BR-CO-10, BR-CO-13 to BR-CO-17, the VAT
breakdowns) and two decimals in amounts. It prints one line per violation,
"FILE: [RULE-ID] message", or "FILE: valid (SYNTAX)". It does not check the
XML Schema: CEN's validation artefacts remain the official check (see
docs/operations.md, "E-invoices").`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			failed := 0
			for _, f := range files {
				ok, err := validateEinvoiceFile(cmd.OutOrStdout(), f)
				if err != nil {
					return err
				}
				if !ok {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%w: %d of %d file(s)", errInvalidEinvoice, failed, len(files))
			}
			return nil
		},
	}
}

// validateEinvoiceFile prints the verdict on one file; a file that is not
// an e-invoice at all (unreadable, not XML, another document) fails too.
func validateEinvoiceFile(w io.Writer, path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		_, werr := fmt.Fprintf(w, "%s: %v\n", path, err)
		return false, werr
	}
	defer f.Close()
	report, err := einvoice.Validate(f)
	if err != nil {
		_, werr := fmt.Fprintf(w, "%s: %v\n", path, err)
		return false, werr
	}
	if len(report.Problems) == 0 {
		_, err := fmt.Fprintf(w, "%s: valid (%s)\n", path, report.Syntax)
		return true, err
	}
	for _, p := range report.Problems {
		if _, err := fmt.Fprintf(w, "%s: %s\n", path, p.Message); err != nil {
			return false, err
		}
	}
	return false, nil
}
