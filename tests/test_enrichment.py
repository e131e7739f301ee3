"""Regulation enrichment: real-looking sentences in the five languages, ambiguity left out."""

from __future__ import annotations

import pytest

from pipeline.text import regulations as enrichment


@pytest.mark.parametrize("text,expected", [
    # en
    ("Controllers must comply with the GDPR and, for California residents, with the CCPA.", ["CCPA", "GDPR"]),
    ("Under the UK GDPR, fines can reach GBP 17.5 million.", ["UK-GDPR"]),
    ("Financial entities must report major ICT-related incidents under DORA.", ["DORA"]),
    ("Transfers to Canada rely on PIPEDA; payments in the EU follow PSD2 and Directive 2014/65/EU.",
     ["MiFID-II", "PIPEDA", "PSD2"]),
    ("Korea's PIPA requires separate consent for transfers abroad.", ["KR-PIPA"]),
    # de
    ("Die Verarbeitung erfolgt gemäß Art. 6 DSGVO in Verbindung mit § 26 BDSG.", ["BDSG", "GDPR"]),
    ("Kryptowerte-Dienstleister benötigen eine Zulassung nach MiCA, Verordnung (EU) 2023/1114.", ["MiCA"]),
    ("Für die Datenübermittlung nach China ist das chinesische CSL zu beachten.", ["CSL-CN"]),
    # es
    ("El tratamiento se rige por el RGPD y la Ley Orgánica 3/2018 (LOPDGDD).", ["GDPR", "LOPDGDD"]),
    ("La LGPD brasileña se inspira en el Reglamento General de Protección de Datos.", ["GDPR", "LGPD"]),
    ("La LOPD, adaptada por la Ley Orgánica 3/2018, garantiza los derechos digitales.", ["LOPDGDD"]),
    # zh
    ("根据《中华人民共和国个人信息保护法》第三十八条，向境外提供个人信息应当具备条件。", ["PIPL"]),
    ("日本个人信息保护法与欧盟通用数据保护条例存在差异。", ["APPI", "GDPR"]),
    ("韩国个人信息保护法规定了类似的告知义务；网络安全法则要求数据本地化。", ["CSL-CN", "KR-PIPA"]),
    # ja
    ("個人情報保護法第27条に基づき、第三者提供には本人の同意が必要です。", ["APPI"]),
    ("中国の個人情報保護法（PIPL）は2021年に施行された。", ["PIPL"]),
    ("韓国の個人情報保護法も同様の規定を置いている。", ["KR-PIPA"]),
    ("改正決済サービス指令（PSD2）により強力な顧客認証が求められる。", ["PSD2"]),
])
def test_regulations_named_in_five_languages(text, expected):
    assert enrichment.find_regulations(text) == expected


@pytest.mark.parametrize("text", [
    "The team tracks the four DORA metrics, such as deployment frequency.",  # DevOps, not the EU act
    "CSL Behring publishes its annual report in March.",  # the company, not China's law
    "The PROTECT IP Act (PIPA) was shelved in 2012.",  # the US bill, not Korea's law
    "La antigua LOPD de 1999 fue derogada.",  # the repealed 15/1999 law, not the LOPDGDD
    "Glimmer, englisch mica, ist ein Schichtsilikat.",  # the mineral, not MiCA
    "Die Daten werden nach der Datenschutzerklärung verarbeitet.",
    "个人信息处理者应当采取必要措施。",
])
def test_ambiguous_or_absent_names_are_left_out(text):
    assert enrichment.find_regulations(text) == []


def test_every_regulation_has_names_in_five_languages_and_facts():
    regs = enrichment.regulations()
    assert len(regs) >= 12
    for reg_id, entry in regs.items():
        assert set(entry["names"]) == {"en", "de", "es", "zh", "ja"}, reg_id
        assert all(entry[k] for k in ("jurisdiction", "effective_date", "scope", "penalty_provision")), reg_id
        assert enrichment.find_regulations(f"... {entry['names']['en']} ...") == [reg_id]
    facts = enrichment.regulation_facts(["PIPL"])
    assert facts["PIPL"]["effective_date"] == "2021-11-01" and facts["PIPL"]["jurisdiction"].endswith("China")
