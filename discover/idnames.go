package discover

// idNames are the joined words (see words) of column names that hold a
// customer, client, account or record number, in English, German,
// French, Spanish, Portuguese, Italian and Dutch, with what they are.
// A name is one entry; "n° client" is "nclient" (° is no letter),
// "nº cliente" keeps the º (a letter).
var idNames = func() map[string]string {
	m := map[string]string{}
	add := func(what string, names ...string) {
		for _, n := range names {
			m[n] = what
		}
	}
	add("customer number", "customernumber", "customerno", "customernr", "customerid", "custno", "custid",
		"kundennummer", "kundennr", "kundenno", "kundenid", "kundennummern", "debitorennummer", "debitornummer", "debitorennr",
		"numéroclient", "numeroclient", "numérodeclient", "numerodeclient", "nclient", "noclient", "nºclient", "idclient", "codeclient", "référenceclient", "referenceclient",
		"númerodecliente", "numerodecliente", "númerocliente", "numerocliente", "nºcliente", "ncliente", "nodecliente", "idcliente", "códigodecliente", "codigodecliente", "códigocliente", "codigocliente",
		"númerodocliente", "numerodocliente", "códigodocliente", "codigodocliente",
		"numerodicliente", "codicecliente",
		"klantnummer", "klantnr", "klantid", "klantcode", "debiteurnummer", "debiteurnr", "relatienummer")
	add("client number", "clientnumber", "clientno", "clientnr", "clientid")
	add("account number", "accountnumber", "accountno", "accountnr")
	add("member number", "membernumber", "memberno", "memberid", "mitgliedsnummer", "mitgliedsnr", "numéroadhérent", "numeroadherent", "numerodesocio", "númerodesocio", "lidnummer")
	add("record id", "recordid", "contactid", "personid", "kontaktid")
	return m
}()
