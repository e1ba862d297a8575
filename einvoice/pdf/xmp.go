package pdf

import (
	"bytes"
	"encoding/xml"
)

// docInfo is what both the Info dictionary and the XMP metadata say about
// the file; PDF/A requires the two to agree.
type docInfo struct {
	Title    string
	Author   string
	Subject  string
	Creator  string
	Producer string
	Date     string // the document's date, YYYY-MM-DD: creation and modification
	Lang     string
	FacturX  bool // the file carries factur-x.xml
}

// Factur-X 1.0 names (Factur-X specification, "PDF/A-3 metadata"): the
// extension schema's namespace, and the values for the EN 16931 profile.
const (
	facturXNamespace = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
	facturXFileName  = "factur-x.xml"
	facturXLevel     = "EN 16931"
)

// facturXSchema declares the fx: properties to PDF/A validators: PDF/A-3
// accepts only XMP properties of known schemas or of schemas the file
// describes with the PDF/A extension schema.
const facturXSchema = `  <rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
   <pdfaExtension:schemas>
    <rdf:Bag>
     <rdf:li rdf:parseType="Resource">
      <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
      <pdfaSchema:namespaceURI>` + facturXNamespace + `</pdfaSchema:namespaceURI>
      <pdfaSchema:prefix>fx</pdfaSchema:prefix>
      <pdfaSchema:property>
       <rdf:Seq>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>DocumentFileName</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The name of the embedded XML document</pdfaProperty:description>
        </rdf:li>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>DocumentType</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The type of the hybrid document in capital letters, e.g. INVOICE or ORDER</pdfaProperty:description>
        </rdf:li>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>Version</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The actual version of the standard applying to the embedded XML document</pdfaProperty:description>
        </rdf:li>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>ConformanceLevel</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The conformance level of the embedded XML document</pdfaProperty:description>
        </rdf:li>
       </rdf:Seq>
      </pdfaSchema:property>
     </rdf:li>
    </rdf:Bag>
   </pdfaExtension:schemas>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:fx="` + facturXNamespace + `">
   <fx:DocumentType>INVOICE</fx:DocumentType>
   <fx:DocumentFileName>` + facturXFileName + `</fx:DocumentFileName>
   <fx:Version>1.0</fx:Version>
   <fx:ConformanceLevel>` + facturXLevel + `</fx:ConformanceLevel>
  </rdf:Description>
`

// xmpPacket is the document's XMP metadata: PDF/A-3B identification, the
// Dublin Core and XMP basics mirroring the Info dictionary, and for a
// Factur-X file the Factur-X schema and its values.
func xmpPacket(in docInfo) []byte {
	var b bytes.Buffer
	b.WriteString("<?xpacket begin=\"\uFEFF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n")
	b.WriteString(`<x:xmpmeta xmlns:x="adobe:ns:meta/">` + "\n")
	b.WriteString(` <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` + "\n")
	b.WriteString(`  <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">` + "\n")
	b.WriteString("   <pdfaid:part>3</pdfaid:part>\n   <pdfaid:conformance>B</pdfaid:conformance>\n  </rdf:Description>\n")
	b.WriteString(`  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">` + "\n")
	b.WriteString("   <dc:format>application/pdf</dc:format>\n")
	writeAlt(&b, "dc:title", in.Title)
	b.WriteString("   <dc:creator><rdf:Seq><rdf:li>" + esc(in.Author) + "</rdf:li></rdf:Seq></dc:creator>\n")
	writeAlt(&b, "dc:description", in.Subject)
	b.WriteString("  </rdf:Description>\n")
	b.WriteString(`  <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">` + "\n")
	b.WriteString("   <xmp:CreatorTool>" + esc(in.Creator) + "</xmp:CreatorTool>\n")
	if isDay(in.Date) { // as in the Info dictionary: the document's date or none
		date := in.Date + "T00:00:00Z"
		b.WriteString("   <xmp:CreateDate>" + date + "</xmp:CreateDate>\n")
		b.WriteString("   <xmp:ModifyDate>" + date + "</xmp:ModifyDate>\n")
		b.WriteString("   <xmp:MetadataDate>" + date + "</xmp:MetadataDate>\n")
	}
	b.WriteString("  </rdf:Description>\n")
	b.WriteString(`  <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">` + "\n")
	b.WriteString("   <pdf:Producer>" + esc(in.Producer) + "</pdf:Producer>\n  </rdf:Description>\n")
	if in.FacturX {
		b.WriteString(facturXSchema)
	}
	b.WriteString(" </rdf:RDF>\n</x:xmpmeta>\n")
	b.WriteString(`<?xpacket end="w"?>`)
	return b.Bytes()
}

func writeAlt(b *bytes.Buffer, name, value string) {
	b.WriteString("   <" + name + `><rdf:Alt><rdf:li xml:lang="x-default">` + esc(value) + "</rdf:li></rdf:Alt></" + name + ">\n")
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // writes to memory: cannot fail
	return b.String()
}
