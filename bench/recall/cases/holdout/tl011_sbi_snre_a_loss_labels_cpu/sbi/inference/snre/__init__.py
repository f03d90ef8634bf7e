from sbi.inference.snre.snre_a import SNRE_A
