package pdf

import (
	"fmt"
	"strings"

	"github.com/invoicing/invoicing/einvoice"
)

// locale is how the PDF speaks: its labels, number and date formats. The
// document's Language picks one by its primary subtag (de-AT is de);
// English is the default. The XML, not the PDF, is the legal data: labels
// are for people.
type locale struct {
	words     map[string]string // English text → this language's; missing words stay English
	decimal   string
	thousands string
	date      func(y, m, d string) string
}

func (lc locale) t(en string) string {
	if w, ok := lc.words[en]; ok {
		return w
	}
	return en
}

// tf is t of a format string, then fmt.Sprintf.
func (lc locale) tf(en string, args ...any) string { return fmt.Sprintf(lc.t(en), args...) }

// number rewrites an English-formatted number ("1,234.56") in the locale's
// separators.
func (lc locale) number(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case ',':
			b.WriteString(lc.thousands)
		case '.':
			b.WriteString(lc.decimal)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// day formats a YYYY-MM-DD date; anything else is printed as it is.
func (lc locale) day(s string) string {
	if !isDay(s) {
		return s
	}
	return lc.date(s[0:4], s[5:7], s[8:10])
}

// kind are the labels that differ between an invoice and a credit note.
type kind struct {
	heading, title, number, date, payable, notes string
}

var (
	invoiceKind    = kind{"INVOICE", "Invoice %s", "Invoice number", "Issue date", "Amount due", "NOTES"}
	creditNoteKind = kind{"CREDIT NOTE", "Credit note %s", "Credit note number", "Credit note date", "Amount credited", "REASON"}
)

// kindOf is a document's kind by its type code (BT-3).
func kindOf(d einvoice.Document) kind {
	if d.TypeCode == einvoice.TypeCreditNote {
		return creditNoteKind
	}
	return invoiceKind
}

// title is the document's title: "Invoice INV-1", "Credit note CN-1", or
// "Draft invoice" before it has a number.
func (lc locale) title(d einvoice.Document) string {
	if d.Number == "" {
		return lc.t("Draft invoice")
	}
	return lc.tf(kindOf(d).title, d.Number)
}

// localeFor picks the locale of a BCP 47 language tag.
func localeFor(tag string) locale {
	primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
	switch primary {
	case "de":
		return locale{words: german, decimal: ",", thousands: ".", date: func(y, m, d string) string { return d + "." + m + "." + y }}
	case "fr":
		return locale{words: french, decimal: ",", thousands: "\u00A0", date: func(y, m, d string) string { return d + "/" + m + "/" + y }}
	}
	return locale{decimal: ".", thousands: ",", date: func(y, m, d string) string { return y + "-" + m + "-" + d }}
}

// The translations are tables, never written.
var german = map[string]string{
	"INVOICE": "RECHNUNG", "CREDIT NOTE": "RECHNUNGSKORREKTUR", "DRAFT": "ENTWURF", "VOID": "STORNIERT",
	"Invoice %s": "Rechnung %s", "Credit note %s": "Rechnungskorrektur %s", "Draft invoice": "Rechnungsentwurf",
	"Invoice number": "Rechnungsnummer", "Issue date": "Rechnungsdatum", "Due date": "Fällig am",
	"Delivery date": "Lieferdatum", "Billing period": "Leistungszeitraum", "Buyer reference": "Ihre Referenz",
	"Order reference": "Bestellnummer", "Currency": "Währung", "Voided: %s": "Storniert: %s",
	"BILL TO": "RECHNUNGSEMPFÄNGER", "DELIVER TO": "LIEFERANSCHRIFT", "Amounts in %s": "Beträge in %s",
	"Description": "Beschreibung", "Qty": "Menge", "Unit": "Einheit", "Unit price": "Einzelpreis",
	"VAT": "USt.", "Net amount": "Netto", "VAT BREAKDOWN": "UMSATZSTEUER", "Category": "Kategorie",
	"Rate": "Satz", "Taxable": "Bemessung", "Sum of lines": "Summe der Positionen",
	"Total excl. VAT": "Gesamt netto", "Total incl. VAT": "Gesamt brutto", "Paid": "Bezahlt",
	"Amount due": "Zu zahlen", "PAYMENT": "ZAHLUNG", "TERMS": "BEDINGUNGEN", "NOTES": "HINWEISE",
	"Please pay %s by %s.": "Bitte zahlen Sie %s bis zum %s.", "Payment by %s": "Zahlung per %s",
	"Account holder: %s": "Kontoinhaber: %s", "Reference: %s": "Verwendungszweck: %s",
	"(continued)": "(Fortsetzung)", "Page %d of %d": "Seite %d von %d", "VAT ID %s": "USt-IdNr. %s",
	"VAT ID: %s": "USt-IdNr.: %s", "Tax number: %s": "Steuernummer: %s", "Registration: %s": "Register: %s",
	"ID: %s": "Kennung: %s", "E-invoicing address: %s": "E-Rechnungsadresse: %s",
	"SEPA credit transfer": "SEPA-Überweisung", "credit transfer": "Überweisung", "payment to bank account": "Zahlung auf Bankkonto",
	"Standard rate": "Regelsatz", "Zero rated": "Nullsatz", "Exempt from VAT": "Steuerbefreit",
	"Reverse charge": "Reverse-Charge", "Intra-community supply": "Innergem. Lieferung",
	"Export outside the EU": "Ausfuhr", "Not subject to VAT": "Nicht steuerbar",
	"unit": "Stk.", "piece": "Stk.", "each": "Stk.", "hour": "Std.", "day": "Tag", "week": "Woche",
	"month": "Monat", "year": "Jahr", "service": "Leistung", "lump sum": "pauschal", "set": "Satz", "pair": "Paar",
	"box": "Karton", "pack": "Packung",
	// A credit note is a Rechnungskorrektur: "Gutschrift" is, in German VAT
	// law (§ 14 (2) UStG), a self-billed invoice, which this is not.
	"Credit note number": "Korrekturnummer", "Credit note date": "Datum", "Amount credited": "Gutgeschrieben",
	"REASON": "GRUND", "Credit note for invoice %s of %s": "Korrektur der Rechnung %s vom %s",
}

var french = map[string]string{
	"INVOICE": "FACTURE", "CREDIT NOTE": "AVOIR", "DRAFT": "BROUILLON", "VOID": "ANNULÉE",
	"Invoice %s": "Facture %s", "Credit note %s": "Avoir %s", "Draft invoice": "Projet de facture",
	"Invoice number": "Numéro", "Issue date": "Date", "Due date": "Échéance",
	"Delivery date": "Date de livraison", "Billing period": "Période", "Buyer reference": "Votre référence",
	"Order reference": "Bon de commande", "Currency": "Devise", "Voided: %s": "Annulée : %s",
	"BILL TO": "FACTURÉ À", "DELIVER TO": "LIVRÉ À", "Amounts in %s": "Montants en %s",
	"Description": "Désignation", "Qty": "Qté", "Unit": "Unité", "Unit price": "Prix unitaire",
	"VAT": "TVA", "Net amount": "Montant HT", "VAT BREAKDOWN": "DÉTAIL DE LA TVA", "Category": "Catégorie",
	"Rate": "Taux", "Taxable": "Base HT", "Sum of lines": "Total des lignes",
	"Total excl. VAT": "Total HT", "Total incl. VAT": "Total TTC", "Paid": "Déjà payé",
	"Amount due": "Net à payer", "PAYMENT": "PAIEMENT", "TERMS": "CONDITIONS", "NOTES": "REMARQUES",
	"Please pay %s by %s.": "Merci de régler %s avant le %s.", "Payment by %s": "Paiement par %s",
	"Account holder: %s": "Titulaire : %s", "Reference: %s": "Référence : %s",
	"(continued)": "(suite)", "Page %d of %d": "Page %d sur %d", "VAT ID %s": "TVA %s",
	"VAT ID: %s": "N° TVA : %s", "Tax number: %s": "N° fiscal : %s", "Registration: %s": "Immatriculation : %s",
	"ID: %s": "Identifiant : %s", "E-invoicing address: %s": "Adresse de facturation électronique : %s",
	"SEPA credit transfer": "virement SEPA", "credit transfer": "virement", "payment to bank account": "versement sur compte bancaire",
	"Standard rate": "Taux normal", "Zero rated": "Taux zéro", "Exempt from VAT": "Exonéré de TVA",
	"Reverse charge": "Autoliquidation", "Intra-community supply": "Livraison intracom.",
	"Export outside the EU": "Exportation hors UE", "Not subject to VAT": "Hors champ de la TVA",
	"unit": "unité", "piece": "pièce", "each": "unité", "hour": "heure", "day": "jour", "week": "semaine",
	"month": "mois", "year": "an", "service": "prestation", "lump sum": "forfait", "set": "lot", "pair": "paire",
	"box": "carton", "pack": "paquet",
	"Credit note number": "Numéro d'avoir", "Credit note date": "Date", "Amount credited": "Montant de l'avoir",
	"REASON": "MOTIF", "Credit note for invoice %s of %s": "Avoir sur la facture %s du %s",
}
