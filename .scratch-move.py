import os,re,subprocess,sys
root=os.getcwd()
def block_span(lines,name):
  pat=re.compile(r'^export\s+(?:async\s+)?(?:function|const|interface|type|class|let)\s+'+re.escape(name)+r'\b')
  for i,l in enumerate(lines):
    if pat.match(l): break
  else: raise SystemExit('not found '+name)
  start=i
  while start>0 and (lines[start-1].startswith('/**') or lines[start-1].startswith(' *') or lines[start-1].startswith('//')): start-=1
  bal=0;j=i
  while True:
    s=re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'','""',lines[j])
    s=re.sub(r'//.*$','',s)
    for ch in s:
      if ch in '({[': bal+=1
      elif ch in ')}]': bal-=1
    if bal<=0 and (s.rstrip().endswith(';') or s.rstrip().endswith('}')) : break
    j+=1
  return start,j+1
def rel(frm,to):
  r=os.path.relpath(to,os.path.dirname(frm))
  if not r.startswith('.'): r='./'+r
  return r[:-3]+'.js'
def resolve(frm,spec):
  t=os.path.normpath(os.path.join(os.path.dirname(frm),spec))
  return t[:-3]+'.ts' if t.endswith('.js') else t
def move(src,dst,names):
  src=os.path.join(root,src); dst=os.path.join(root,dst)
  lines=open(src).read().split('\n')
  spans=sorted(block_span(lines,n) for n in names)
  moved=[];keep=[];last=0
  for a,b in spans:
    keep+=lines[last:a]; moved.append('\n'.join(lines[a:b])); last=b
    if last<len(lines) and lines[last]=='' : last+=1
  keep+=lines[last:]
  srctext='\n'.join(keep)
  # imports of src, repointed for dst
  imps=re.findall(r'^import[^;]*?from\s+"[^"]+";',open(src).read(),re.M|re.S)
  dimps=[]
  for imp in imps:
    m=re.search(r'from\s+"([^"]+)"',imp); spec=m.group(1)
    if spec.startswith('.'): imp=imp.replace('"'+spec+'"','"'+rel(dst,resolve(src,spec))+'"')
    dimps.append(imp)
  header=''
  if os.path.exists(dst):
    body=open(dst).read().rstrip('\n')+'\n\n'+'\n\n'.join(moved)+'\n'
    body='\n'.join(dimps)+'\n'+body
  else:
    body='\n'.join(dimps)+'\n\n'+'\n\n'.join(moved)+'\n'
  open(dst,'w').write(body)
  used=[n for n in names if re.search(r'\b'+re.escape(n)+r'\b',srctext.split('\n',0)[0])]
  used=[n for n in names if re.search(r'\b'+re.escape(n)+r'\b',srctext)]
  if used:
    srctext='import { '+', '.join(used)+' } from "'+rel(src,dst)+'";\n'+srctext
  open(src,'w').write(srctext)
  repoint(src,dst,names)
def repoint(src,dst,names):
  src=os.path.join(root,src); dst=os.path.join(root,dst)
  files=subprocess.check_output(['git','ls-files','*.ts'],cwd=root,text=True).split()+[os.path.relpath(dst,root)]
  imp=re.compile(r'import\s+(type\s+)?\{([^}]*)\}\s+from\s+"([^"]+)";\n')
  for f in set(files):
    p=os.path.join(root,f)
    if p in (src,dst) or not os.path.exists(p): continue
    s=open(p).read(); o=s; add=[]
    def fix(m):
      spec=m.group(3)
      if not spec.startswith('.') or resolve(p,spec)!=src: return m.group(0)
      ns=[n.strip() for n in m.group(2).split(',') if n.strip()]
      k=[];mv=[]
      for n in ns:
        base=re.sub(r'^type\s+','',n).split(' as ')[0].strip()
        (mv if base in names else k).append(n if not m.group(1) else n)
      if not mv: return m.group(0)
      add.append(((m.group(1) or ''),mv))
      return ('import '+(m.group(1) or '')+'{ '+', '.join(k)+' } from "'+spec+'";\n') if k else ''
    s=imp.sub(fix,s)
    if add:
      i=s.find('import ')
      s=s[:i]+''.join('import '+t+'{ '+', '.join(mv)+' } from "'+rel(p,dst)+'";\n' for t,mv in add)+s[i:]
    if s!=o: open(p,'w').write(s); print('  importer',f)
if __name__=='__main__':
  (repoint if len(sys.argv)>4 else move)(sys.argv[1],sys.argv[2],sys.argv[3].split(','))
